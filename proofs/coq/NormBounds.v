(** * Spectral-norm bounds and the norm assembly of the residual lemmas

    Backs the matrix-level steps that were prose only:
    - [proofs/enclosure.md] §9 F4 and Lemma 2.3 ([fperror.norm2_upper]):
      [||M||_2 <= ||M||_F] ([frobenius_bound]) and
      [||M||_2 <= sqrt(||M||_1 ||M||_inf)] ([holder_bound]), both also for
      [|M|], so [N(M) = min(..)] bounds [M] and [|M|] ([lemma_2_3_norm2_upper]);
    - Lemma 2.4 / Lemma G.2's norm step: the Schur test ([schur_test]) and
      its symmetric case, the Collatz-Wielandt bound
      [||N||_2 <= max_i (N x)_i / x_i] for symmetric nonnegative [N] and
      [x > 0] ([collatz_wielandt], [lemma_g2_quotients]; used by
      [gram.abs_gram_norm_upper] and [fperror._collatz_wielandt_step]);
    - the assembly "entrywise bound => norm bound" of Lemmas 3.1, 3.2,
      3.2', 3.4 and G.1 ([entrywise_assembly] and the named corollaries):
      [||E||_2 <= || |E| ||_2], monotonicity of [||.||_2] on nonnegative
      matrices ([opbound_mono]), the triangle inequality ([opbound_add]),
      [||c 1 1^T||_2 = c sqrt(m n)] ([opbound_const]); Lemma 3.4's
      symmetric completion ([symmetric_completion_entrywise]).

    Matrices are functions [nat -> nat -> R] read on [i < m], [j < n];
    [opbound m n M c] says [||M y||_2 <= c ||y||_2] for every [y], i.e.
    [||M||_2 <= c].  Everything is real arithmetic: the float inputs of the
    code (its Frobenius sums, row and column sums, vectors [z]) enter as
    real upper bounds, which the other files prove they are
    ([Summation.v], [MatvecChain.v], [FastCertificate.v], [Chunked.v]), and
    the last step of [fperror._residual_bound_finish] is Arb arithmetic
    on them (containment, F6). *)

From Coq Require Import Reals Psatz.
Open Scope R_scope.

(** ** Finite sums *)
Fixpoint rsum (n : nat) (f : nat -> R) : R :=
  match n with
  | O => 0
  | S k => rsum k f + f k
  end.

Lemma rsum_ext : forall n f g, (forall i, (i < n)%nat -> f i = g i) -> rsum n f = rsum n g.
Proof.
  induction n as [|n IH]; intros f g H; simpl; [reflexivity|].
  rewrite (IH f g) by (intros; apply H; lia). rewrite H by lia. reflexivity.
Qed.

Lemma rsum_le : forall n f g, (forall i, (i < n)%nat -> f i <= g i) -> rsum n f <= rsum n g.
Proof.
  induction n as [|n IH]; intros f g H; simpl; [lra|].
  apply Rplus_le_compat; [apply IH; intros; apply H; lia|apply H; lia].
Qed.

Lemma rsum_zero : forall n, rsum n (fun _ => 0) = 0.
Proof. induction n as [|n IH]; simpl; [reflexivity|]. rewrite IH. ring. Qed.

Lemma rsum_nonneg : forall n f, (forall i, (i < n)%nat -> 0 <= f i) -> 0 <= rsum n f.
Proof.
  intros n f H. rewrite <- (rsum_zero n). apply rsum_le. exact H.
Qed.

Lemma rsum_add : forall n f g, rsum n (fun i => f i + g i) = rsum n f + rsum n g.
Proof. induction n as [|n IH]; intros f g; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma rsum_scal : forall n c f, rsum n (fun i => c * f i) = c * rsum n f.
Proof. induction n as [|n IH]; intros c f; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma rsum_const : forall n c, rsum n (fun _ => c) = INR n * c.
Proof.
  induction n as [|n IH]; intros c; simpl rsum; [simpl; ring|]. rewrite IH, S_INR. ring.
Qed.

Lemma rsum_abs : forall n f, Rabs (rsum n f) <= rsum n (fun i => Rabs (f i)).
Proof.
  induction n as [|n IH]; intros f; simpl; [rewrite Rabs_R0; lra|].
  eapply Rle_trans; [apply Rabs_triang|]. specialize (IH f). lra.
Qed.

Lemma rsum_swap : forall m n f,
  rsum m (fun i => rsum n (fun j => f i j)) = rsum n (fun j => rsum m (fun i => f i j)).
Proof.
  induction m as [|m IH]; intros n f; simpl.
  - symmetry. apply rsum_zero.
  - rewrite IH, <- rsum_add. reflexivity.
Qed.

Lemma div_nonneg : forall a b, 0 <= a -> 0 < b -> 0 <= a / b.
Proof. intros a b Ha Hb. unfold Rdiv. apply Rmult_le_pos; [exact Ha|left; apply Rinv_0_lt_compat, Hb]. Qed.

(** ** Cauchy-Schwarz, plain and weighted (by the discriminant) *)
Lemma discriminant : forall A B C, 0 <= A ->
  (forall t, 0 <= A * t * t - 2 * B * t + C) -> B * B <= A * C.
Proof.
  intros A B C [HA|HA] H.
  - specialize (H (B / A)).
    replace (A * (B / A) * (B / A) - 2 * B * (B / A) + C) with (C - B * B / A) in H by (field; lra).
    assert (H1 : B * B / A <= C) by lra.
    apply (Rmult_le_compat_r A) in H1; [|lra].
    replace (B * B / A * A) with (B * B) in H1 by (field; lra). lra.
  - subst A. destruct (Req_dec B 0) as [HB|HB].
    + subst B. specialize (H 0). lra.
    + specialize (H ((C + 1) / (2 * B))).
      replace (0 * ((C + 1) / (2 * B)) * ((C + 1) / (2 * B)) - 2 * B * ((C + 1) / (2 * B)) + C)
        with (-1) in H by (field; exact HB). lra.
Qed.

Lemma sq_le_of_abs_le : forall a b, Rabs a <= b -> a * a <= b * b.
Proof.
  intros a b H. pose proof (Rabs_pos a).
  rewrite <- (Rabs_pos_eq (a * a)) by apply Rle_0_sqr. rewrite Rabs_mult.
  apply Rmult_le_compat; lra.
Qed.

Lemma le_of_sq_le : forall a b, a * a <= b * b -> 0 <= b -> a <= b.
Proof. intros a b H Hb. destruct (Rle_or_lt a b) as [|Hl]; [assumption|]. nra. Qed.

Theorem cauchy_schwarz : forall n a b,
  rsum n (fun j => a j * b j) * rsum n (fun j => a j * b j)
  <= rsum n (fun j => a j * a j) * rsum n (fun j => b j * b j).
Proof.
  intros n a b. apply discriminant.
  - apply rsum_nonneg. intros; apply Rle_0_sqr.
  - intros t.
    replace (rsum n (fun j => a j * a j) * t * t - 2 * rsum n (fun j => a j * b j) * t
             + rsum n (fun j => b j * b j))
      with (t * t * rsum n (fun j => a j * a j) + (- 2 * t) * rsum n (fun j => a j * b j)
            + rsum n (fun j => b j * b j)) by ring.
    rewrite <- (rsum_scal n (t * t)), <- (rsum_scal n (- 2 * t)), <- !rsum_add.
    apply rsum_nonneg. intros j _.
    assert (0 <= (a j * t - b j) * (a j * t - b j)) by apply Rle_0_sqr. nra.
Qed.

Theorem weighted_cauchy_schwarz : forall n w x y,
  (forall j, (j < n)%nat -> 0 <= w j) -> (forall j, (j < n)%nat -> 0 < x j) ->
  rsum n (fun j => w j * y j) * rsum n (fun j => w j * y j)
  <= rsum n (fun j => w j * x j) * rsum n (fun j => w j * (y j * y j / x j)).
Proof.
  intros n w x y Hw Hx. apply discriminant.
  - apply rsum_nonneg. intros j Hj. pose proof (Hw j Hj). pose proof (Hx j Hj). nra.
  - intros t.
    replace (rsum n (fun j => w j * x j) * t * t - 2 * rsum n (fun j => w j * y j) * t
             + rsum n (fun j => w j * (y j * y j / x j)))
      with (t * t * rsum n (fun j => w j * x j) + (- 2 * t) * rsum n (fun j => w j * y j)
            + rsum n (fun j => w j * (y j * y j / x j))) by ring.
    rewrite <- (rsum_scal n (t * t)), <- (rsum_scal n (- 2 * t)), <- !rsum_add.
    apply rsum_nonneg. intros j Hj. pose proof (Hw j Hj). pose proof (Hx j Hj).
    replace (t * t * (w j * x j) + - 2 * t * (w j * y j) + w j * (y j * y j / x j))
      with (w j * ((x j * t - y j) * (x j * t - y j) / x j)) by (field; lra).
    apply Rmult_le_pos; [lra|]. apply div_nonneg; [apply Rle_0_sqr|lra].
Qed.

(** ** Matrices and the spectral-norm bound *)
Definition mv (n : nat) (M : nat -> nat -> R) (y : nat -> R) (i : nat) : R :=
  rsum n (fun j => M i j * y j).
Definition nsq (n : nat) (y : nat -> R) : R := rsum n (fun j => y j * y j).

(** [opbound m n M c]: [||M||_2 <= c] for the [m x n] matrix [M]. *)
Definition opbound (m n : nat) (M : nat -> nat -> R) (c : R) : Prop :=
  0 <= c /\ forall y, nsq m (mv n M y) <= c * c * nsq n y.

Definition mabs (M : nat -> nat -> R) : nat -> nat -> R := fun i j => Rabs (M i j).

Lemma nsq_nonneg : forall n y, 0 <= nsq n y.
Proof. intros; apply rsum_nonneg; intros; apply Rle_0_sqr. Qed.

Lemma nsq_abs : forall n y, nsq n (fun j => Rabs (y j)) = nsq n y.
Proof.
  intros n y. apply rsum_ext. intros j _. rewrite <- Rabs_mult.
  apply Rabs_pos_eq, Rle_0_sqr.
Qed.

Lemma opbound_ext : forall m n A B c,
  (forall i j, (i < m)%nat -> (j < n)%nat -> A i j = B i j) -> opbound m n A c -> opbound m n B c.
Proof.
  intros m n A B c H [Hc HA]. split; [exact Hc|]. intros y.
  replace (nsq m (mv n B y)) with (nsq m (mv n A y)); [apply HA|].
  apply rsum_ext. intros i Hi.
  replace (mv n B y i) with (mv n A y i); [reflexivity|].
  apply rsum_ext. intros j Hj. rewrite H by assumption. reflexivity.
Qed.

Lemma opbound_weaken : forall m n M c c', opbound m n M c -> c <= c' -> opbound m n M c'.
Proof.
  intros m n M c c' [Hc H] Hle. split; [lra|]. intros y.
  eapply Rle_trans; [apply H|]. apply Rmult_le_compat_r; [apply nsq_nonneg|].
  apply Rmult_le_compat; lra.
Qed.

Lemma opbound_min : forall m n M a b, opbound m n M a -> opbound m n M b -> opbound m n M (Rmin a b).
Proof. intros m n M a b Ha Hb. unfold Rmin. destruct (Rle_dec a b); assumption. Qed.

(** Monotonicity: [|E| <= F] entrywise and [||F||_2 <= c] give
    [||E||_2 <= c] (so [||E||_2 <= || |E| ||_2], and [||.||_2] is
    monotone on nonnegative matrices). *)
Theorem opbound_mono : forall m n E F c,
  (forall i j, (i < m)%nat -> (j < n)%nat -> Rabs (E i j) <= F i j) ->
  opbound m n F c -> opbound m n E c.
Proof.
  intros m n E F c H [Hc HF]. split; [exact Hc|]. intros y.
  rewrite <- (nsq_abs n y). eapply Rle_trans; [|apply HF].
  apply rsum_le. intros i Hi. apply sq_le_of_abs_le.
  unfold mv. eapply Rle_trans; [apply rsum_abs|].
  apply rsum_le. intros j Hj. rewrite Rabs_mult.
  apply Rmult_le_compat_r; [apply Rabs_pos|apply H; assumption].
Qed.

Lemma opbound_abs : forall m n M c, opbound m n (mabs M) c -> opbound m n M c.
Proof. intros m n M c H. apply (opbound_mono m n M (mabs M)); [|exact H]. intros; unfold mabs; lra. Qed.

(** The triangle inequality. *)
Theorem opbound_add : forall m n A B a b,
  opbound m n A a -> opbound m n B b -> opbound m n (fun i j => A i j + B i j) (a + b).
Proof.
  intros m n A B a b [Ha HA] [Hb HB]. split; [lra|]. intros y.
  set (U := nsq m (mv n A y)). set (V := nsq m (mv n B y)). set (Y := nsq n y).
  set (X := rsum m (fun i => mv n A y i * mv n B y i)).
  assert (E : nsq m (mv n (fun i j => A i j + B i j) y) = U + 2 * X + V).
  { unfold U, V, X, nsq. rewrite <- (rsum_scal m 2), <- !rsum_add. apply rsum_ext. intros i _.
    assert (Em : mv n (fun i j => A i j + B i j) y i = mv n A y i + mv n B y i).
    { unfold mv. rewrite <- rsum_add. apply rsum_ext. intros; ring. }
    rewrite Em. ring. }
  rewrite E.
  assert (HU : U <= a * a * Y) by apply HA. assert (HV : V <= b * b * Y) by apply HB.
  assert (HY : 0 <= Y) by apply nsq_nonneg.
  assert (HU0 : 0 <= U) by apply nsq_nonneg. assert (HV0 : 0 <= V) by apply nsq_nonneg.
  assert (HX : X <= a * b * Y).
  { apply le_of_sq_le; [|apply Rmult_le_pos; [apply Rmult_le_pos|]; assumption].
    eapply Rle_trans; [apply cauchy_schwarz|]. fold U V.
    replace (a * b * Y * (a * b * Y)) with ((a * a * Y) * (b * b * Y)) by ring.
    apply Rmult_le_compat; assumption. }
  nra.
Qed.

Theorem opbound_scal : forall m n M a c,
  opbound m n M a -> opbound m n (fun i j => c * M i j) (Rabs c * a).
Proof.
  intros m n M a c [Ha HM]. split; [apply Rmult_le_pos; [apply Rabs_pos|exact Ha]|]. intros y.
  replace (nsq m (mv n (fun i j => c * M i j) y)) with (c * c * nsq m (mv n M y)).
  - replace (Rabs c * a * (Rabs c * a) * nsq n y) with (Rabs c * Rabs c * (a * a * nsq n y)) by ring.
    rewrite <- Rabs_mult, (Rabs_pos_eq (c * c)) by apply Rle_0_sqr.
    apply Rmult_le_compat_l; [apply Rle_0_sqr|apply HM].
  - unfold nsq. rewrite <- rsum_scal. apply rsum_ext. intros i _. unfold mv.
    replace (rsum n (fun j => c * M i j * y j)) with (c * rsum n (fun j => M i j * y j)).
    + ring.
    + rewrite <- rsum_scal. apply rsum_ext. intros; ring.
Qed.

Lemma opbound_scal_nonneg : forall m n M a c,
  opbound m n M a -> 0 <= c -> opbound m n (fun i j => c * M i j) (c * a).
Proof.
  intros m n M a c H Hc. replace (c * a) with (Rabs c * a) by (rewrite Rabs_pos_eq; auto).
  apply opbound_scal, H.
Qed.

Lemma opbound_zero : forall m n, opbound m n (fun _ _ => 0) 0.
Proof.
  intros m n. split; [lra|]. intros y. unfold nsq, mv.
  replace (rsum m _) with 0; [rewrite Rmult_0_l, Rmult_0_l; lra|].
  rewrite <- (rsum_zero m) at 1. apply rsum_ext. intros i _.
  rewrite (rsum_ext n _ (fun _ => 0)) by (intros; ring). rewrite rsum_zero. ring.
Qed.

(** A finite family: [||sum_t C_t||_2 <= sum_t c_t]. *)
Theorem opbound_rsum : forall m n T (C : nat -> nat -> nat -> R) c,
  (forall t, (t < T)%nat -> opbound m n (C t) (c t)) ->
  opbound m n (fun i j => rsum T (fun t => C t i j)) (rsum T c).
Proof.
  intros m n T C c. induction T as [|T IH]; intros H; simpl.
  - apply opbound_zero.
  - apply opbound_add; [apply IH; intros; apply H; lia|apply H; lia].
Qed.

(** ** The Schur test, and its corollaries F4 (Hölder), Frobenius,
    Collatz-Wielandt *)
Theorem schur_test : forall m n M p x a b,
  (forall i, (i < m)%nat -> 0 < p i) -> (forall j, (j < n)%nat -> 0 < x j) ->
  0 <= a -> 0 <= b ->
  (forall i, (i < m)%nat -> rsum n (fun j => Rabs (M i j) * x j) <= a * p i) ->
  (forall j, (j < n)%nat -> rsum m (fun i => Rabs (M i j) * p i) <= b * x j) ->
  opbound m n M (sqrt (a * b)).
Proof.
  intros m n M p x a b Hp Hx Ha Hb Hrow Hcol. split; [apply sqrt_pos|]. intros y.
  rewrite sqrt_sqrt by (apply Rmult_le_pos; assumption).
  set (qv := fun j => y j * y j / x j).
  assert (Hq : forall j, (j < n)%nat -> 0 <= qv j).
  { intros j Hj. unfold qv. apply div_nonneg; [apply Rle_0_sqr|apply Hx, Hj]. }
  (* each row, by the weighted Cauchy-Schwarz inequality *)
  assert (H1 : forall i, (i < m)%nat ->
    mv n M y i * mv n M y i <= a * p i * rsum n (fun j => Rabs (M i j) * qv j)).
  { intros i Hi.
    assert (HB : Rabs (mv n M y i) <= rsum n (fun j => Rabs (M i j) * Rabs (y j))).
    { unfold mv. eapply Rle_trans; [apply rsum_abs|]. right. apply rsum_ext. intros; apply Rabs_mult. }
    eapply Rle_trans; [apply sq_le_of_abs_le, HB|].
    eapply Rle_trans; [apply weighted_cauchy_schwarz; [intros; apply Rabs_pos|exact Hx]|]. cbv beta.
    replace (rsum n (fun j => Rabs (M i j) * (Rabs (y j) * Rabs (y j) / x j)))
      with (rsum n (fun j => Rabs (M i j) * qv j)).
    2:{ apply rsum_ext. intros j _. unfold qv. rewrite <- Rabs_mult, (Rabs_pos_eq (y j * y j)) by apply Rle_0_sqr.
        reflexivity. }
    apply Rmult_le_compat_r; [apply rsum_nonneg; intros j Hj; apply Rmult_le_pos; [apply Rabs_pos|apply Hq, Hj]|].
    apply Hrow, Hi. }
  (* sum over the rows, exchange the sums, use the column condition *)
  unfold nsq at 1. eapply Rle_trans; [apply rsum_le; exact H1|].
  assert (E1 : rsum m (fun i => a * p i * rsum n (fun j => Rabs (M i j) * qv j))
             = a * rsum n (fun j => qv j * rsum m (fun i => Rabs (M i j) * p i))).
  { transitivity (rsum m (fun i => rsum n (fun j => a * (qv j * (Rabs (M i j) * p i))))).
    - apply rsum_ext. intros i _. rewrite <- rsum_scal. apply rsum_ext. intros; ring.
    - rewrite rsum_swap, <- rsum_scal. apply rsum_ext. intros j _.
      rewrite rsum_scal, rsum_scal. reflexivity. }
  rewrite E1.
  assert (E2 : a * b * nsq n y = a * rsum n (fun j => qv j * (b * x j))).
  { unfold nsq. rewrite <- (rsum_scal n (a * b)), <- (rsum_scal n a). apply rsum_ext.
    intros j Hj. unfold qv. pose proof (Hx j Hj). field. lra. }
  rewrite E2. apply Rmult_le_compat_l; [exact Ha|].
  apply rsum_le. intros j Hj. apply Rmult_le_compat_l; [apply Hq, Hj|apply Hcol, Hj].
Qed.

(** F4: [||M||_2 <= sqrt(||M||_inf ||M||_1)] for ANY real matrix, from
    upper bounds [a] of its absolute row sums and [b] of its absolute
    column sums. *)
Theorem holder_bound : forall m n M a b,
  0 <= a -> 0 <= b ->
  (forall i, (i < m)%nat -> rsum n (fun j => Rabs (M i j)) <= a) ->
  (forall j, (j < n)%nat -> rsum m (fun i => Rabs (M i j)) <= b) ->
  opbound m n M (sqrt (a * b)).
Proof.
  intros m n M a b Ha Hb Hr Hc.
  apply (schur_test m n M (fun _ => 1) (fun _ => 1)); try (intros; lra); try assumption.
  - intros i Hi. rewrite Rmult_1_r. rewrite (rsum_ext n _ (fun j => Rabs (M i j))) by (intros; ring).
    apply Hr, Hi.
  - intros j Hj. rewrite Rmult_1_r. rewrite (rsum_ext m _ (fun i => Rabs (M i j))) by (intros; ring).
    apply Hc, Hj.
Qed.

(** [||M||_2 <= ||M||_F]. *)
Theorem frobenius_bound : forall m n M F,
  rsum m (fun i => rsum n (fun j => M i j * M i j)) <= F -> opbound m n M (sqrt F).
Proof.
  intros m n M F HF.
  assert (HF0 : 0 <= F).
  { eapply Rle_trans; [|exact HF]. apply rsum_nonneg. intros. apply rsum_nonneg. intros. apply Rle_0_sqr. }
  split; [apply sqrt_pos|]. intros y. rewrite sqrt_sqrt by exact HF0.
  unfold nsq at 1. eapply Rle_trans.
  - apply rsum_le with (g := fun i => rsum n (fun j => M i j * M i j) * nsq n y).
    intros i Hi. apply cauchy_schwarz.
  - rewrite (rsum_ext m _ (fun i => nsq n y * rsum n (fun j => M i j * M i j))) by (intros; ring).
    rewrite rsum_scal. rewrite Rmult_comm. apply Rmult_le_compat_r; [apply nsq_nonneg|exact HF].
Qed.

(** Lemma G.2 (Collatz-Wielandt): for a symmetric nonnegative [N] and a
    vector [x > 0] with [N x <= c x], [||N||_2 <= c]. *)
Theorem collatz_wielandt : forall m N x c,
  (forall i j, (i < m)%nat -> (j < m)%nat -> N i j = N j i) ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> 0 <= N i j) ->
  (forall i, (i < m)%nat -> 0 < x i) -> 0 <= c ->
  (forall i, (i < m)%nat -> rsum m (fun j => N i j * x j) <= c * x i) ->
  opbound m m N c.
Proof.
  intros m N x c Hs Hn Hx Hc H.
  replace c with (sqrt (c * c)) by (rewrite sqrt_square; [reflexivity|exact Hc]).
  apply (schur_test m m N x x); try assumption.
  - intros i Hi. rewrite (rsum_ext m _ (fun j => N i j * x j)); [apply H, Hi|].
    intros j Hj. rewrite Rabs_pos_eq by (apply Hn; assumption). reflexivity.
  - intros j Hj. rewrite (rsum_ext m _ (fun i => N j i * x i)); [apply H, Hj|].
    intros i Hi. rewrite Rabs_pos_eq by (apply Hn; assumption). rewrite Hs by assumption. reflexivity.
Qed.

(** The code's form (Lemma G.2 *Evaluation*, Lemma 3.4 (iii)): floats
    [z1 > 0] with [N 1 <= z1] and [z2 >= N z1]; then
    [||N||_2 <= max_i z1_i] and [||N||_2 <= max_i z2_i / z1_i]; any
    [c1 >= z1_i], [c2 >= z2_i / z1_i] (for every [i]) will do, so the
    smaller one too. *)
Theorem lemma_g2_quotients : forall m N z1 z2 c1 c2,
  (forall i j, (i < m)%nat -> (j < m)%nat -> N i j = N j i) ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> 0 <= N i j) ->
  (forall i, (i < m)%nat -> 0 < z1 i) ->
  (forall i, (i < m)%nat -> rsum m (fun j => N i j) <= z1 i) ->
  (forall i, (i < m)%nat -> rsum m (fun j => N i j * z1 j) <= z2 i) ->
  0 <= c1 -> (forall i, (i < m)%nat -> z1 i <= c1) ->
  0 <= c2 -> (forall i, (i < m)%nat -> z2 i / z1 i <= c2) ->
  opbound m m N (Rmin c1 c2).
Proof.
  intros m N z1 z2 c1 c2 Hs Hn Hz1 H1 H2 Hc1 Hb1 Hc2 Hb2. apply opbound_min.
  - apply (collatz_wielandt m N (fun _ => 1) c1); try assumption; [intros; lra|].
    intros i Hi. rewrite Rmult_1_r. rewrite (rsum_ext m _ (fun j => N i j)) by (intros; ring).
    eapply Rle_trans; [apply H1, Hi|apply Hb1, Hi].
  - apply (collatz_wielandt m N z1 c2); try assumption.
    intros i Hi. eapply Rle_trans; [apply H2, Hi|].
    pose proof (Hb2 i Hi) as Hq. pose proof (Hz1 i Hi).
    apply (Rmult_le_compat_r (z1 i)) in Hq; [|lra].
    replace (z2 i / z1 i * z1 i) with (z2 i) in Hq by (field; lra). lra.
Qed.

(** [||c 1 1^T||_2 <= c sqrt(m n)] for [c >= 0]. *)
Theorem opbound_const : forall m n c, 0 <= c ->
  opbound m n (fun _ _ => c) (c * sqrt (INR m * INR n)).
Proof.
  intros m n c Hc.
  assert (E : c * sqrt (INR m * INR n) = sqrt ((INR n * c) * (INR m * c))).
  { replace (INR n * c * (INR m * c)) with (c * c * (INR m * INR n)) by ring.
    rewrite (sqrt_mult_alt (c * c) (INR m * INR n)) by (apply Rle_0_sqr). rewrite sqrt_square by exact Hc. reflexivity. }
  rewrite E. pose proof (pos_INR m). pose proof (pos_INR n).
  apply holder_bound; try (apply Rmult_le_pos; assumption).
  - intros i _. rewrite rsum_const, Rabs_pos_eq by exact Hc. lra.
  - intros j _. rewrite rsum_const, Rabs_pos_eq by exact Hc. lra.
Qed.

(** ** Lemma 2.3: [N(M) = min(||M||_F, sqrt(||M||_1 ||M||_inf))] bounds
    [||M||_2] and [|| |M| ||_2] ([fperror.norm2_upper]: [F] an upper bound
    of [sum m_ij^2] (Lemma 2.2, [_sumsq_upper]), [n1], [ninf] upper bounds
    of the column and row sums of [|M|] ([_inflate] maxima). *)
Theorem lemma_2_3_norm2_upper : forall m n M F n1 ninf,
  rsum m (fun i => rsum n (fun j => M i j * M i j)) <= F ->
  0 <= n1 -> 0 <= ninf ->
  (forall j, (j < n)%nat -> rsum m (fun i => Rabs (M i j)) <= n1) ->
  (forall i, (i < m)%nat -> rsum n (fun j => Rabs (M i j)) <= ninf) ->
  opbound m n (mabs M) (Rmin (sqrt F) (sqrt (n1 * ninf))) /\
  opbound m n M (Rmin (sqrt F) (sqrt (n1 * ninf))).
Proof.
  intros m n M F n1 ninf HF Hn1 Hninf Hc Hr.
  assert (H : opbound m n (mabs M) (Rmin (sqrt F) (sqrt (n1 * ninf)))).
  { apply opbound_min.
    - apply frobenius_bound. eapply Rle_trans; [|exact HF]. right. apply rsum_ext. intros i _.
      apply rsum_ext. intros j _. unfold mabs. rewrite <- Rabs_mult.
      apply Rabs_pos_eq, Rle_0_sqr.
    - rewrite Rmult_comm. apply holder_bound; try assumption.
      + intros i Hi. unfold mabs. rewrite (rsum_ext n _ (fun j => Rabs (M i j))) by (intros; apply Rabs_Rabsolu).
        apply Hr, Hi.
      + intros j Hj. unfold mabs. rewrite (rsum_ext m _ (fun i => Rabs (M i j))) by (intros; apply Rabs_Rabsolu).
        apply Hc, Hj. }
  split; [exact H|apply opbound_abs, H].
Qed.

(** ** The assembly: an entrywise bound
    [|A - B| <= sum_t w_t |C_t| + gam N + kap 1 1^T] and norm bounds of
    [B], [|C_t|], [N] give
    [||A||_2 <= b + sum_t w_t c_t + gam nN + kap sqrt(m n)]. *)
Theorem entrywise_assembly : forall m n A B b T (w : nat -> R) (C : nat -> nat -> nat -> R) c
    gam N nN kap,
  opbound m n B b ->
  (forall t, (t < T)%nat -> 0 <= w t) ->
  (forall t, (t < T)%nat -> opbound m n (mabs (C t)) (c t)) ->
  0 <= gam -> (forall i j, (i < m)%nat -> (j < n)%nat -> 0 <= N i j) -> opbound m n N nN ->
  0 <= kap ->
  (forall i j, (i < m)%nat -> (j < n)%nat ->
     Rabs (A i j - B i j) <= rsum T (fun t => w t * Rabs (C t i j)) + gam * N i j + kap) ->
  opbound m n A (b + rsum T (fun t => w t * c t) + gam * nN + kap * sqrt (INR m * INR n)).
Proof.
  intros m n A B b T w C c gam N nN kap HB Hw HC Hg HN0 HN Hk H.
  set (F := fun i j => rsum T (fun t => w t * Rabs (C t i j)) + gam * N i j + kap).
  assert (HF : opbound m n F (rsum T (fun t => w t * c t) + gam * nN + kap * sqrt (INR m * INR n))).
  { apply opbound_add; [apply opbound_add|].
    - apply (opbound_rsum m n T (fun t i j => w t * Rabs (C t i j)) (fun t => w t * c t)).
      intros t Ht. cbv beta. apply (opbound_scal_nonneg m n (mabs (C t))); [apply HC, Ht|apply Hw, Ht].
    - apply opbound_scal_nonneg; assumption.
    - apply opbound_const, Hk. }
  assert (HAB : opbound m n (fun i j => A i j - B i j) _) by (apply (opbound_mono m n _ F); [exact H|exact HF]).
  replace (b + rsum T (fun t => w t * c t) + gam * nN + kap * sqrt (INR m * INR n))
    with (b + (rsum T (fun t => w t * c t) + gam * nN + kap * sqrt (INR m * INR n))) by ring.
  apply (opbound_ext m n (fun i j => B i j + (A i j - B i j))); [intros; ring|].
  apply opbound_add; assumption.
Qed.

(** A symmetric nonnegative matrix with row sums [<= w] has
    [||N||_2 <= w] ([||N||_1 = ||N||_inf], F4). *)
Lemma symmetric_rowsum_bound : forall m N w,
  (forall i j, (i < m)%nat -> (j < m)%nat -> N i j = N j i) ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> 0 <= N i j) -> 0 <= w ->
  (forall i, (i < m)%nat -> rsum m (fun j => N i j) <= w) -> opbound m m N w.
Proof.
  intros m N w Hs Hn Hw H.
  replace w with (sqrt (w * w)) by (rewrite sqrt_square; [reflexivity|exact Hw]).
  apply holder_bound; try assumption.
  - intros i Hi. rewrite (rsum_ext m _ (fun j => N i j)); [apply H, Hi|].
    intros j Hj. apply Rabs_pos_eq, Hn; assumption.
  - intros j Hj. rewrite (rsum_ext m _ (fun i => N j i)); [apply H, Hj|].
    intros i Hi. rewrite Hs by assumption. apply Rabs_pos_eq, Hn; assumption.
Qed.

(** ** Lemma 3.1's assembly ([fperror._gram_deviation_finish]).
    [G] ([r x r]) with [|G - X^T X| <= gam N + kap] entrywise (Lemmas 2.1,
    2.5), [N = |X|^T |X|] symmetric nonnegative with row sums [<= w]
    ([_inflate] of the chunked [|X|^T v], Lemma 2.2), [D = G - I] exactly
    (Sterbenz) with [||D||_2 <= nD] (Lemma 2.3):
    [||X^T X - I||_2 <= nD + gam w + kap r]. *)
Theorem lemma_3_1_assembly : forall r (XtX G N : nat -> nat -> R) nD gam w kap,
  opbound r r (fun i j => G i j - (if Nat.eq_dec i j then 1 else 0)) nD ->
  0 <= gam -> 0 <= w -> 0 <= kap ->
  (forall i j, (i < r)%nat -> (j < r)%nat -> N i j = N j i) ->
  (forall i j, (i < r)%nat -> (j < r)%nat -> 0 <= N i j) ->
  (forall i, (i < r)%nat -> rsum r (fun j => N i j) <= w) ->
  (forall i j, (i < r)%nat -> (j < r)%nat -> Rabs (G i j - XtX i j) <= gam * N i j + kap) ->
  opbound r r (fun i j => XtX i j - (if Nat.eq_dec i j then 1 else 0)) (nD + gam * w + kap * INR r).
Proof.
  intros r XtX G N nD gam w kap HD Hg Hw Hk Hs Hn Hrow H.
  replace (kap * INR r) with (kap * sqrt (INR r * INR r))
    by (rewrite sqrt_square; [reflexivity|apply pos_INR]).
  replace (nD + gam * w + kap * sqrt (INR r * INR r))
    with (nD + rsum 0 (fun t => 0 * 0) + gam * w + kap * sqrt (INR r * INR r)) by (simpl; ring).
  apply (entrywise_assembly r r (fun i j => XtX i j - (if Nat.eq_dec i j then 1 else 0))
    (fun i j => G i j - (if Nat.eq_dec i j then 1 else 0)) nD 0 (fun _ => 0) (fun _ _ _ => 0) (fun _ => 0)
    gam N w kap); try assumption.
  - intros t Ht. lia.
  - intros t Ht. lia.
  - apply symmetric_rowsum_bound; assumption.
  - intros i j Hi Hj. simpl. rewrite Rplus_0_l.
    replace (XtX i j - (if Nat.eq_dec i j then 1 else 0) - (G i j - (if Nat.eq_dec i j then 1 else 0)))
      with (- (G i j - XtX i j)) by ring.
    rewrite Rabs_Ropp. apply H; assumption.
Qed.

(** ** Lemma 3.2 / 3.2' / 3.3's assembly ([fperror.residual_norm_bound],
    [_residual_bound_finish]).  [R = W - X S Y^T] (exact, [m x n]), the
    chunk residuals [Rc 0 .. Rc (q-1)] with [Rc (q-1) = R_hat]; entrywise
    [|R - R_hat| <= 2u sum_c |Rc c| + gam N + kap] ([FastCertificate.v]'s
    entry bound, Lemma 2.1 per chunk); [||R_hat||_2, || |R_hat| ||_2 <= nR]
    and [|| |Rc c| ||_2 <= nc c] (Lemma 2.3; [_sumsq_upper]), [||N||_2 <= nN]
    for [N = |X||S||Y|^T] (Lemma 2.4); then, the code's expression,
    [||R||_2 <= (1+2u) nR + 2u sum_{c<q-1} nc c + gam nN + kap sqrt(m n)]. *)
Theorem lemma_3_2_assembly : forall m n q (Res Rhat N : nat -> nat -> R) (Rc : nat -> nat -> nat -> R)
    nR nc u gam nN kap,
  (q > 0)%nat -> (forall i j, Rc (pred q) i j = Rhat i j) ->
  opbound m n Rhat nR -> opbound m n (mabs Rhat) nR ->
  (forall c, (c < pred q)%nat -> opbound m n (mabs (Rc c)) (nc c)) ->
  0 <= u -> 0 <= gam -> (forall i j, (i < m)%nat -> (j < n)%nat -> 0 <= N i j) ->
  opbound m n N nN -> 0 <= kap ->
  (forall i j, (i < m)%nat -> (j < n)%nat ->
     Rabs (Res i j - Rhat i j) <= 2 * u * rsum q (fun c => Rabs (Rc c i j)) + gam * N i j + kap) ->
  opbound m n Res ((1 + 2 * u) * nR + 2 * u * rsum (pred q) nc + gam * nN + kap * sqrt (INR m * INR n)).
Proof.
  intros m n q Res Rhat N Rc nR nc u gam nN kap Hq Hlast HR HaR Hc Hu Hg HN0 HN Hk H.
  set (nc' := fun c => if Nat.eq_dec c (pred q) then nR else nc c).
  assert (Hsum : rsum q (fun c => 2 * u * nc' c) = 2 * u * rsum (pred q) nc + 2 * u * nR).
  { destruct q as [|q']; [lia|]. simpl rsum. rewrite rsum_scal.
    assert (E1 : nc' q' = nR) by (unfold nc'; simpl; destruct (Nat.eq_dec q' q'); [reflexivity|lia]).
    assert (E2 : rsum q' nc' = rsum q' nc).
    { apply rsum_ext; intros c Hc'; unfold nc'; simpl; destruct (Nat.eq_dec c q'); [lia|reflexivity]. }
    rewrite E1, E2. simpl pred. ring. }
  replace ((1 + 2 * u) * nR + 2 * u * rsum (pred q) nc + gam * nN + kap * sqrt (INR m * INR n))
    with (nR + rsum q (fun c => 2 * u * nc' c) + gam * nN + kap * sqrt (INR m * INR n))
    by (rewrite Hsum; ring).
  apply (entrywise_assembly m n Res Rhat nR q (fun _ => 2 * u) Rc nc' gam N nN kap); try assumption.
  - intros; lra.
  - intros c Hc'. unfold nc'. destruct (Nat.eq_dec c (pred q)) as [->|Hne].
    + apply (opbound_ext m n (mabs Rhat)); [|exact HaR]. intros i j _ _. unfold mabs. rewrite Hlast. reflexivity.
    + apply Hc. lia.
  - intros i j Hi Hj. rewrite rsum_scal. apply H; assumption.
Qed.

(** ** Lemma 3.4: the symmetric completion.  For every pair [(i,j)]
    either the code computed [(i,j)] (and the entrywise bound holds
    there), or it computed [(j,i)] and the completion mirrors every
    intermediate; with [R] and [N] symmetric the bound holds at [(i,j)]
    too — whether the computed set holds one or both of [(i,j)], [(j,i)]
    (the diagonal blocks hold both, so [R_tilde] need not be symmetric;
    Lemma 3.4 then uses [sqrt(||.||_1 ||.||_inf)], [holder_bound], valid
    for any matrix). *)
Theorem symmetric_completion_entrywise : forall m (Res Rt N : nat -> nat -> R)
    (Rc : nat -> nat -> nat -> R) q w gam kap (computed : nat -> nat -> Prop),
  (forall i j, (i < m)%nat -> (j < m)%nat -> Res i j = Res j i) ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> N i j = N j i) ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> computed i j ->
     Rabs (Res i j - Rt i j) <= w * rsum q (fun c => Rabs (Rc c i j)) + gam * N i j + kap) ->
  (forall i j, (i < m)%nat -> (j < m)%nat ->
     computed i j \/
     (computed j i /\ Rt i j = Rt j i /\ forall c, (c < q)%nat -> Rc c i j = Rc c j i)) ->
  forall i j, (i < m)%nat -> (j < m)%nat ->
     Rabs (Res i j - Rt i j) <= w * rsum q (fun c => Rabs (Rc c i j)) + gam * N i j + kap.
Proof.
  intros m Res Rt N Rc q w gam kap computed HR HN Hb Hc i j Hi Hj.
  destruct (Hc i j Hi Hj) as [H|(H & Et & Ec)]; [apply Hb; assumption|].
  rewrite HR, Et, HN by assumption.
  rewrite (rsum_ext q _ (fun c => Rabs (Rc c j i))) by (intros c Hc'; rewrite Ec by exact Hc'; reflexivity).
  apply Hb; assumption.
Qed.

(** Lemma 3.4 as the code assembles it ([fperror.symmetric_residual_norm_bound]):
    [R = W - U Lambda U^T] ([m x m], [W], [R] symmetric), the completed
    chunk residuals [Rt_c] with [Rt_(q-1) = R_tilde]; [nR] bounds
    [||R_tilde||_2] and [|| |R_tilde| ||_2] (Lemma 2.3 with row AND column
    sums), [nc c] bounds [|| |Rt_c| ||_2]; [N_U] symmetric nonnegative with
    [||N_U||_2 <= nN] ([lemma_g2_quotients]):
    [||R||_2 <= (1+2u) nR + 2u sum_{c<q-1} nc c + gam nN + kap m]. *)
Theorem lemma_3_4_assembly : forall m q (Res Rt N : nat -> nat -> R) (Rc : nat -> nat -> nat -> R)
    (computed : nat -> nat -> Prop) nR nc u gam nN kap,
  (q > 0)%nat -> (forall i j, Rc (pred q) i j = Rt i j) ->
  opbound m m Rt nR -> opbound m m (mabs Rt) nR ->
  (forall c, (c < pred q)%nat -> opbound m m (mabs (Rc c)) (nc c)) ->
  0 <= u -> 0 <= gam -> (forall i j, (i < m)%nat -> (j < m)%nat -> 0 <= N i j) ->
  opbound m m N nN -> 0 <= kap ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> Res i j = Res j i) ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> N i j = N j i) ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> computed i j ->
     Rabs (Res i j - Rt i j) <= 2 * u * rsum q (fun c => Rabs (Rc c i j)) + gam * N i j + kap) ->
  (forall i j, (i < m)%nat -> (j < m)%nat ->
     computed i j \/
     (computed j i /\ Rt i j = Rt j i /\ forall c, (c < q)%nat -> Rc c i j = Rc c j i)) ->
  opbound m m Res ((1 + 2 * u) * nR + 2 * u * rsum (pred q) nc + gam * nN + kap * INR m).
Proof.
  intros m q Res Rt N Rc computed nR nc u gam nN kap Hq Hl HR HaR Hc Hu Hg HN0 HN Hk HRs HNs Hb Hcomp.
  replace (kap * INR m) with (kap * sqrt (INR m * INR m))
    by (rewrite sqrt_square; [reflexivity|apply pos_INR]).
  apply (lemma_3_2_assembly m m q Res Rt N Rc); try assumption.
  apply (symmetric_completion_entrywise m Res Rt N Rc q (2 * u) gam kap computed); assumption.
Qed.

(** ** Lemma G.1's assembly ([gram.rounded_gram]): [|G_hat - W W^T| <=
    gam N + kap] entrywise with [||N||_2 <= nN] give
    [||G_hat - W W^T||_2 <= gam nN + kap m]. *)
Theorem lemma_g1_assembly : forall m (E N : nat -> nat -> R) gam nN kap,
  0 <= gam -> (forall i j, (i < m)%nat -> (j < m)%nat -> 0 <= N i j) -> opbound m m N nN -> 0 <= kap ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> Rabs (E i j) <= gam * N i j + kap) ->
  opbound m m E (gam * nN + kap * INR m).
Proof.
  intros m E N gam nN kap Hg HN0 HN Hk H.
  replace (gam * nN + kap * INR m)
    with (0 + rsum 0 (fun t => 0 * 0) + gam * nN + kap * sqrt (INR m * INR m))
    by (rewrite sqrt_square by apply pos_INR; simpl; ring).
  apply (entrywise_assembly m m E (fun _ _ => 0) 0 0 (fun _ => 0) (fun _ _ _ => 0) (fun _ => 0)
    gam N nN kap); try assumption.
  - apply opbound_zero.
  - intros t Ht. lia.
  - intros t Ht. lia.
  - intros i j Hi Hj. simpl. rewrite Rminus_0_r, Rplus_0_l. apply H; assumption.
Qed.

(** ** Products and transposes *)
Definition mmul (k : nat) (A B : nat -> nat -> R) : nat -> nat -> R :=
  fun i j => rsum k (fun l => A i l * B l j).
Definition mtr (A : nat -> nat -> R) : nat -> nat -> R := fun i j => A j i.

Lemma mv_mmul : forall k n A B y i, mv n (mmul k A B) y i = mv k A (mv n B y) i.
Proof.
  intros k n A B y i. unfold mv, mmul.
  transitivity (rsum n (fun j => rsum k (fun l => A i l * (B l j * y j)))).
  - apply rsum_ext. intros j _. rewrite Rmult_comm, <- rsum_scal. apply rsum_ext. intros; ring.
  - rewrite rsum_swap. apply rsum_ext. intros l _. rewrite rsum_scal. reflexivity.
Qed.

Lemma nsq_ext : forall n y z, (forall j, (j < n)%nat -> y j = z j) -> nsq n y = nsq n z.
Proof. intros n y z H. apply rsum_ext. intros j Hj. rewrite H by exact Hj. reflexivity. Qed.

(** [||A B||_2 <= ||A||_2 ||B||_2]. *)
Theorem opbound_mul : forall m k n A B a b,
  opbound m k A a -> opbound k n B b -> opbound m n (mmul k A B) (a * b).
Proof.
  intros m k n A B a b [Ha HA] [Hb HB]. split; [apply Rmult_le_pos; assumption|]. intros y.
  rewrite (nsq_ext m _ (mv k A (mv n B y))) by (intros; apply mv_mmul).
  eapply Rle_trans; [apply HA|].
  replace (a * b * (a * b) * nsq n y) with (a * a * (b * b * nsq n y)) by ring.
  apply Rmult_le_compat_l; [apply Rle_0_sqr|apply HB].
Qed.

(** [||A^T||_2 = ||A||_2]: [||A^T y||^2 = <y, A A^T y> <= ||y|| ||A (A^T y)||]. *)
Theorem opbound_transpose : forall m n A a, opbound m n A a -> opbound n m (mtr A) a.
Proof.
  intros m n A a [Ha HA]. split; [exact Ha|]. intros y.
  set (z := mv m (mtr A) y). set (Z := nsq n z). set (Y := nsq m y).
  assert (EZ : Z = rsum m (fun i => y i * mv n A z i)).
  { unfold Z, nsq. unfold z at 1. unfold mv at 1, mtr.
    transitivity (rsum n (fun j => rsum m (fun i => y i * (A i j * z j)))).
    - apply rsum_ext. intros j _. rewrite Rmult_comm, <- rsum_scal. apply rsum_ext. intros; ring.
    - rewrite rsum_swap. apply rsum_ext. intros i _. unfold mv. rewrite rsum_scal. reflexivity. }
  assert (HZ0 : 0 <= Z) by apply nsq_nonneg. assert (HY0 : 0 <= Y) by apply nsq_nonneg.
  assert (H2 : Z * Z <= Y * (a * a * Z)).
  { rewrite EZ at 1 2. eapply Rle_trans; [apply cauchy_schwarz|].
    apply Rmult_le_compat_l; [exact HY0|apply HA]. }
  destruct HZ0 as [HZ|HZ].
  - apply (Rmult_le_reg_r Z); [exact HZ|]. nra.
  - rewrite <- HZ. apply Rmult_le_pos; [apply Rle_0_sqr|exact HY0].
Qed.

(** ** Lemma G.3 (inexact scaling, [gram.rounded_gram]): for
    [W = Ws + Delta] with [||Ws||_2 <= om], [||Delta||_2 <= dl]:
    [||W W^T - Ws Ws^T||_2 <= 2 om dl + dl^2]. *)
Theorem lemma_g3_inexact_scaling : forall m n (Ws Dl : nat -> nat -> R) om dl,
  opbound m n Ws om -> opbound m n Dl dl ->
  opbound m m (fun i j => mmul n (fun a b => Ws a b + Dl a b) (mtr (fun a b => Ws a b + Dl a b)) i j
                          - mmul n Ws (mtr Ws) i j)
    (2 * om * dl + dl * dl).
Proof.
  intros m n Ws Dl om dl HW HD.
  pose proof (opbound_transpose _ _ _ _ HW) as HWt. pose proof (opbound_transpose _ _ _ _ HD) as HDt.
  replace (2 * om * dl + dl * dl) with (dl * om + om * dl + dl * dl) by ring.
  apply (opbound_ext m m (fun i j => mmul n Dl (mtr Ws) i j + mmul n Ws (mtr Dl) i j + mmul n Dl (mtr Dl) i j)).
  - intros i j _ _. unfold mmul, mtr.
    rewrite (rsum_ext n (fun l => (Ws i l + Dl i l) * (Ws j l + Dl j l))
               (fun l => Ws i l * Ws j l + (Dl i l * Ws j l + Ws i l * Dl j l + Dl i l * Dl j l)))
      by (intros; ring).
    rewrite !rsum_add. ring.
  - apply opbound_add; [apply opbound_add|]; apply opbound_mul; assumption.
Qed.

(** ** Lemma 11.1 ([product._gram_factor_stack], [_certify_stack_gram]) *)
Definition idm : nat -> nat -> R := fun i j => if Nat.eq_dec i j then 1 else 0.

Lemma mv_idm : forall n y i, (i < n)%nat -> mv n idm y i = y i.
Proof.
  induction n as [|n IH]; intros y i Hi; [lia|]. unfold mv in *. simpl rsum.
  unfold idm at 2. destruct (Nat.eq_dec i n) as [->|Hne].
  - rewrite (rsum_ext n _ (fun _ => 0)); [rewrite rsum_zero; ring|].
    intros j Hj. unfold idm. destruct (Nat.eq_dec n j); [lia|ring].
  - rewrite IH by lia. ring.
Qed.

Lemma mv_ext : forall n A B y z i,
  (forall j, (j < n)%nat -> A i j = B i j) -> (forall j, (j < n)%nat -> y j = z j) ->
  mv n A y i = mv n B z i.
Proof. intros. unfold mv. apply rsum_ext. intros j Hj. rewrite H, H0 by exact Hj. reflexivity. Qed.

Lemma rsum_sub : forall n f g, rsum n (fun i => f i - g i) = rsum n f - rsum n g.
Proof. induction n as [|n IH]; intros f g; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma mv_sub : forall n A B y i,
  mv n (fun a b => A a b - B a b) y i = mv n A y i - mv n B y i.
Proof. intros. unfold mv. rewrite <- rsum_sub. apply rsum_ext. intros; ring. Qed.

Lemma mv_lin : forall n A y z i,
  mv n A (fun j => y j - z j) i = mv n A y i - mv n A z i.
Proof. intros. unfold mv. rewrite <- rsum_sub. apply rsum_ext. intros; ring. Qed.

(** [(A Z)^T v = Z^T (A^T v)]. *)
Lemma mv_mtr_mmul : forall m d A Z v i,
  mv m (mtr (mmul d A Z)) v i = mv d (mtr Z) (mv m (mtr A) v) i.
Proof.
  intros m d A Z v i. unfold mv, mtr, mmul.
  transitivity (rsum m (fun l => rsum d (fun k => Z k i * (A l k * v l)))).
  - apply rsum_ext. intros l _. rewrite Rmult_comm, <- rsum_scal. apply rsum_ext. intros; ring.
  - rewrite rsum_swap. apply rsum_ext. intros k _. rewrite rsum_scal. reflexivity.
Qed.

Section Lemma111.
(** [A] is [m x d], [R], [Z], [X] are [d x d]; [Z] is a right inverse of
    [R] ([R Z = I]: [R] invertible, [Z = R^-1]; finite-dimensional linear
    algebra gives it once [R] is injective, which (b) shows); [Q = A Z]. *)
Variables (m d : nat) (A Rm Z X : nat -> nat -> R).
Hypothesis right_inverse : forall i j, (i < d)%nat -> (j < d)%nat -> mmul d Rm Z i j = idm i j.

Lemma R_Z : forall y i, (i < d)%nat -> mv d Rm (mv d Z y) i = y i.
Proof.
  intros y i Hi. rewrite <- mv_mmul.
  rewrite (mv_ext d (mmul d Rm Z) idm y y i) by (intros; first [apply right_inverse; assumption|reflexivity]).
  apply mv_idm, Hi.
Qed.

(** (b) [||I - X R||_2 <= delta < 1] gives [||R^-1||_2 <= ||X||_2 / (1 - delta)]
    (the Neumann-series step, here as [w = X (R w) + (I - X R) w]). *)
Theorem lemma_11_1_inverse : forall xi delta,
  opbound d d X xi -> opbound d d (fun i j => idm i j - mmul d X Rm i j) delta -> delta < 1 ->
  opbound d d Z (xi / (1 - delta)).
Proof.
  intros xi delta [Hxi HX] [Hdl HF] Hd1.
  split; [apply div_nonneg; lra|]. intros y.
  set (w := mv d Z y). set (uu := mv d X y).
  set (vv := mv d (fun i j => idm i j - mmul d X Rm i j) w).
  assert (Ew : forall i, (i < d)%nat -> w i = uu i + vv i).
  { intros i Hi. unfold vv. rewrite mv_sub, mv_idm by exact Hi. rewrite mv_mmul.
    unfold uu. rewrite (mv_ext d X X (mv d Rm w) y i); [ring| |]; intros j Hj; [reflexivity|].
    apply R_Z, Hj. }
  set (W := nsq d w). set (Y := nsq d y). set (U := nsq d uu). set (V := nsq d vv).
  assert (HU : U <= xi * xi * Y) by apply HX.
  assert (HV : V <= delta * delta * W) by apply HF.
  assert (HW0 : 0 <= W) by apply nsq_nonneg. assert (HY0 : 0 <= Y) by apply nsq_nonneg.
  assert (HU0 : 0 <= U) by apply nsq_nonneg. assert (HV0 : 0 <= V) by apply nsq_nonneg.
  set (Xp := rsum d (fun i => uu i * vv i)).
  assert (EW : W = U + 2 * Xp + V).
  { unfold W, U, V, Xp, nsq. rewrite <- (rsum_scal d 2), <- !rsum_add. apply rsum_ext.
    intros i Hi. rewrite Ew by exact Hi. ring. }
  set (s := sqrt W). set (t := sqrt Y).
  assert (Hs : s * s = W) by (apply sqrt_sqrt, HW0). assert (Ht : t * t = Y) by (apply sqrt_sqrt, HY0).
  assert (Hs0 : 0 <= s) by apply sqrt_pos. assert (Ht0 : 0 <= t) by apply sqrt_pos.
  assert (HXp : Xp <= (xi * t) * (delta * s)).
  { apply le_of_sq_le; [|apply Rmult_le_pos; apply Rmult_le_pos; assumption].
    eapply Rle_trans; [apply cauchy_schwarz|]. fold U V.
    replace (xi * t * (delta * s) * (xi * t * (delta * s))) with ((xi * xi * (t * t)) * (delta * delta * (s * s)))
      by ring.
    rewrite Ht, Hs. apply Rmult_le_compat; assumption. }
  assert (Hsq : s * s <= (xi * t + delta * s) * (xi * t + delta * s)).
  { rewrite Hs, EW. rewrite <- Ht in HU. rewrite <- Hs in HV. nra. }
  assert (Hlin : s <= xi * t + delta * s)
    by (apply le_of_sq_le; [exact Hsq|apply Rplus_le_le_0_compat; apply Rmult_le_pos; assumption]).
  assert (Hs' : s <= xi / (1 - delta) * t).
  { apply (Rmult_le_reg_r (1 - delta)); [lra|].
    replace (xi / (1 - delta) * t * (1 - delta)) with (xi * t) by (field; lra). lra. }
  rewrite <- Hs, <- Ht.
  replace (xi / (1 - delta) * (xi / (1 - delta)) * (t * t)) with ((xi / (1 - delta) * t) * (xi / (1 - delta) * t))
    by ring.
  apply Rmult_le_compat; assumption.
Qed.

(** (a) [Q^T Q - I = Z^T (A^T A - R^T R) Z], so
    [||Q^T Q - I||_2 <= ||R^-1||_2^2 ||A^T A - R^T R||_2]. *)
Theorem lemma_11_1_orthogonality : forall zeta eps,
  opbound d d Z zeta ->
  opbound d d (fun i j => mmul m (mtr A) A i j - mmul d (mtr Rm) Rm i j) eps ->
  opbound d d (fun i j => mmul m (mtr (mmul d A Z)) (mmul d A Z) i j - idm i j) (zeta * eps * zeta).
Proof.
  intros zeta eps HZ HE.
  pose proof (opbound_transpose _ _ _ _ HZ) as HZt.
  destruct HZ as [Hz HZ']. destruct HE as [He HE']. destruct HZt as [_ HZt'].
  split; [apply Rmult_le_pos; [apply Rmult_le_pos|]; assumption|]. intros y.
  set (E := fun i j => mmul m (mtr A) A i j - mmul d (mtr Rm) Rm i j).
  assert (Ev : forall i, (i < d)%nat ->
     mv d (fun i j => mmul m (mtr (mmul d A Z)) (mmul d A Z) i j - idm i j) y i
     = mv d (mtr Z) (mv d E (mv d Z y)) i).
  { intros i Hi. rewrite mv_sub, mv_idm by exact Hi. rewrite mv_mmul, mv_mtr_mmul.
    (* Q y = A (Z y) *)
    assert (EQ : forall l, (l < m)%nat -> mv d (mmul d A Z) y l = mv d A (mv d Z y) l)
      by (intros; apply mv_mmul).
    rewrite (mv_ext d (mtr Z) (mtr Z) (mv m (mtr A) (mv d (mmul d A Z) y))
               (mv m (mtr A) (mv d A (mv d Z y))) i)
      by (intros; first [reflexivity|apply mv_ext; intros; [reflexivity|apply EQ; assumption]]).
    (* y = Z^T R^T R Z y *)
    assert (Ey : y i = mv d (mtr Z) (mv d (mtr Rm) (mv d Rm (mv d Z y))) i).
    { rewrite <- mv_mtr_mmul.
      rewrite (mv_ext d (mtr (mmul d Rm Z)) (mtr idm) _ y i).
      - unfold mtr. rewrite (mv_ext d (fun a b => idm b a) idm y y i); [apply eq_sym, mv_idm, Hi| |];
          intros j Hj; [|reflexivity]. unfold idm. destruct (Nat.eq_dec j i), (Nat.eq_dec i j); try lia; reflexivity.
      - intros j Hj. unfold mtr. apply right_inverse; assumption.
      - intros j Hj. apply R_Z, Hj. }
    rewrite Ey at 1. rewrite <- mv_lin. apply mv_ext; [intros; reflexivity|].
    intros j Hj. unfold E. rewrite mv_sub, !mv_mmul. reflexivity. }
  rewrite (nsq_ext d _ _ Ev).
  eapply Rle_trans; [apply HZt'|].
  replace (zeta * eps * zeta * (zeta * eps * zeta) * nsq d y)
    with (zeta * zeta * (eps * eps * (zeta * zeta * nsq d y))) by ring.
  apply Rmult_le_compat_l; [apply Rle_0_sqr|].
  eapply Rle_trans; [apply HE'|]. apply Rmult_le_compat_l; [apply Rle_0_sqr|apply HZ'].
Qed.

End Lemma111.

(** ** Lemma 2.4 ([fperror.abs_product_norm2_upper]): for
    [N = |A| diag(|d|) |B|] ([m x k], [k x k], [k x n]) the row sums are
    the chain [|A| (|d| .* (|B| 1))] and the column sums the chain
    [|B|^T (|d| .* (|A|^T 1))]; upper bounds [rN], [cN] of the chains
    ([MatvecChain.v]: the code's [_inflate]d matrix-vector products) give
    [||N||_2 <= sqrt(rN cN)] (F4). *)
Theorem lemma_2_4_chain : forall m k n (A B : nat -> nat -> R) (d : nat -> R) rN cN,
  0 <= rN -> 0 <= cN ->
  (forall i, (i < m)%nat ->
     mv k (mabs A) (fun l => Rabs (d l) * mv n (mabs B) (fun _ => 1) l) i <= rN) ->
  (forall j, (j < n)%nat ->
     mv k (mtr (mabs B)) (fun l => Rabs (d l) * mv m (mtr (mabs A)) (fun _ => 1) l) j <= cN) ->
  opbound m n (mmul k (fun i l => Rabs (A i l) * Rabs (d l)) (mabs B)) (sqrt (rN * cN)).
Proof.
  intros m k n A B d rN cN Hr Hc HR HC.
  set (AD := fun i l => Rabs (A i l) * Rabs (d l)).
  set (N := mmul k AD (mabs B)).
  assert (Hn : forall i j, 0 <= N i j).
  { intros i j. unfold N, mmul. apply rsum_nonneg. intros l _. unfold AD, mabs.
    apply Rmult_le_pos; [apply Rmult_le_pos|]; apply Rabs_pos. }
  apply holder_bound; try assumption.
  - intros i Hi. rewrite (rsum_ext n _ (fun j => N i j * 1)).
    2:{ intros j' _. rewrite Rabs_pos_eq; [ring|apply Hn]. }
    change (rsum n (fun j => N i j * 1)) with (mv n N (fun _ => 1) i).
    unfold N. rewrite mv_mmul. eapply Rle_trans; [|apply HR, Hi]. right.
    unfold mv at 1 3, AD, mabs. apply rsum_ext. intros; ring.
  - intros j Hj. rewrite (rsum_ext m _ (fun i => mtr N j i * 1)).
    2:{ intros i' _. unfold mtr. rewrite Rabs_pos_eq; [ring|apply Hn]. }
    change (rsum m (fun i => mtr N j i * 1)) with (mv m (mtr N) (fun _ => 1) j).
    unfold N. rewrite mv_mtr_mmul. eapply Rle_trans; [|apply HC, Hj]. right.
    apply mv_ext; [reflexivity|]. intros l _. unfold mv, mtr, AD, mabs.
    rewrite <- rsum_scal. apply rsum_ext. intros; ring.
Qed.

(** ** Symmetric tridiagonal perturbations ([tridiagonal_eigenvalue_bounds]
    steps 1-2: an inexactly scaled [T], zeroed tiny off-diagonals): a
    symmetric [M] with [M i j = 0] for [|i - j| > 1], [|M i i| <= al] and
    [|M i (i+1)| <= be] has [||M||_2 <= al + 2 be] (row sums, F4). *)
Lemma rsum_point : forall n k c, rsum n (fun j => if Nat.eq_dec j k then c else 0) = if lt_dec k n then c else 0.
Proof.
  induction n as [|n IH]; intros k c; simpl.
  - destruct (lt_dec k 0); [lia|reflexivity].
  - rewrite IH. destruct (Nat.eq_dec n k) as [->|Hne].
    + destruct (lt_dec k k); [lia|]. destruct (lt_dec k (S k)); [ring|lia].
    + destruct (lt_dec k n), (lt_dec k (S n)); try lia; ring.
Qed.

Lemma rsum_point_le : forall n k c, 0 <= c -> rsum n (fun j => if Nat.eq_dec j k then c else 0) <= c.
Proof. intros n k c Hc. rewrite rsum_point. destruct (lt_dec k n); lra. Qed.

Theorem tridiag_opbound : forall n (M : nat -> nat -> R) al be,
  0 <= al -> 0 <= be ->
  (forall i j, (i < n)%nat -> (j < n)%nat -> M i j = M j i) ->
  (forall i j, (i < n)%nat -> (j < n)%nat -> (S i < j)%nat -> M i j = 0) ->
  (forall i, (i < n)%nat -> Rabs (M i i) <= al) ->
  (forall i, (S i < n)%nat -> Rabs (M i (S i)) <= be) ->
  opbound n n M (al + 2 * be).
Proof.
  intros n M al be Hal Hbe Hs Hz Hd Ho.
  assert (Hrow : forall i, (i < n)%nat -> rsum n (fun j => Rabs (M i j)) <= al + 2 * be).
  { intros i Hi.
    apply Rle_trans with (rsum n (fun j => (if Nat.eq_dec j i then al else 0)
                                       + ((if Nat.eq_dec j (S i) then be else 0)
                                          + (if Nat.eq_dec (S j) i then be else 0)))).
    - apply rsum_le. intros j Hj.
      destruct (Nat.eq_dec j i) as [->|H1]; [destruct (Nat.eq_dec i (S i)); [lia|];
        destruct (Nat.eq_dec (S i) i); [lia|]; pose proof (Hd i Hi); lra|].
      destruct (Nat.eq_dec j (S i)) as [->|H2].
      + destruct (Nat.eq_dec (S (S i)) i); [lia|]. pose proof (Ho i Hj). lra.
      + destruct (Nat.eq_dec (S j) i) as [<-|H3].
        * rewrite Hs by lia. pose proof (Ho j Hi). lra.
        * destruct (lt_dec (S i) j) as [Hl|Hl].
          -- rewrite Hz by assumption. rewrite Rabs_R0. lra.
          -- rewrite Hs by assumption. rewrite Hz by lia. rewrite Rabs_R0. lra.
    - rewrite !rsum_add.
      pose proof (rsum_point_le n i al Hal). pose proof (rsum_point_le n (S i) be Hbe).
      assert (rsum n (fun j => if Nat.eq_dec (S j) i then be else 0) <= be).
      { destruct i as [|i'].
        - rewrite (rsum_ext n _ (fun _ => 0)); [rewrite rsum_zero; lra|].
          intros j _. destruct (Nat.eq_dec (S j) 0); [lia|reflexivity].
        - rewrite (rsum_ext n _ (fun j => if Nat.eq_dec j i' then be else 0)); [apply rsum_point_le, Hbe|].
          intros j _. destruct (Nat.eq_dec (S j) (S i')), (Nat.eq_dec j i'); try lia; reflexivity. }
      lra. }
  replace (al + 2 * be) with (sqrt ((al + 2 * be) * (al + 2 * be))) by (rewrite sqrt_square; [reflexivity|lra]).
  apply holder_bound; try lra.
  - exact Hrow.
  - intros j Hj. rewrite (rsum_ext n _ (fun i => Rabs (M j i))); [apply Hrow, Hj|].
    intros i Hi. rewrite Hs by assumption. reflexivity.
Qed.

(** The symmetric tridiagonal matrix [tridiag(e, d, e)] as a function. *)
Definition trim (d e : nat -> R) (i j : nat) : R :=
  if Nat.eq_dec i j then d i else if Nat.eq_dec (S i) j then e i else if Nat.eq_dec (S j) i then e j else 0.

(** [||tridiag(e1,d1,e1) - tridiag(e2,d2,e2)||_2 <= al + 2 be] when the
    diagonals differ by [<= al] and the off-diagonals by [<= be]. *)
Theorem trim_diff_opbound : forall n d1 e1 d2 e2 al be, 0 <= al -> 0 <= be ->
  (forall i, (i < n)%nat -> Rabs (d1 i - d2 i) <= al) ->
  (forall k, (S k < n)%nat -> Rabs (e1 k - e2 k) <= be) ->
  opbound n n (fun i j => trim d1 e1 i j - trim d2 e2 i j) (al + 2 * be).
Proof.
  intros n d1 e1 d2 e2 al be Hal Hbe Hd He. apply tridiag_opbound; try assumption.
  - intros i j _ _. unfold trim.
    destruct (Nat.eq_dec i j) as [->|H1]; [destruct (Nat.eq_dec j j); [reflexivity|lia]|].
    destruct (Nat.eq_dec j i) as [E|_]; [lia|].
    destruct (Nat.eq_dec (S i) j) as [<-|H2].
    + destruct (Nat.eq_dec (S (S i)) i); [lia|]. destruct (Nat.eq_dec (S i) (S i)); [reflexivity|lia].
    + destruct (Nat.eq_dec (S j) i) as [<-|H3]; [destruct (Nat.eq_dec (S j) (S j)); [reflexivity|lia]|].
      reflexivity.
  - intros i j _ _ Hij. unfold trim.
    destruct (Nat.eq_dec i j); [lia|]. destruct (Nat.eq_dec (S i) j); [lia|].
    destruct (Nat.eq_dec (S j) i); [lia|]. ring.
  - intros i Hi. unfold trim. destruct (Nat.eq_dec i i); [apply Hd, Hi|lia].
  - intros i Hi. unfold trim. destruct (Nat.eq_dec i (S i)); [lia|].
    destruct (Nat.eq_dec (S i) (S i)); [apply He, Hi|lia].
Qed.

Lemma Rabs_le_inv_helper : forall a b h, - (h - b) <= a -> a <= h - b -> Rabs a + b <= h.
Proof.
  intros a b h H1 H2. assert (Rabs a <= h - b) by (apply Rabs_le; split; assumption). lra.
Qed.

(** ** Gershgorin's interval for a symmetric tridiagonal matrix
    ([tridiagonal.gershgorin_bounds], the default ends of
    [tridiagonal_eigenvalue_bounds]) *)

(** The absolute row sum of a tridiagonal row. *)
Lemma tridiag_row_le : forall n (M : nat -> nat -> R) i, (i < n)%nat ->
  (forall j, (j < n)%nat -> (S i < j)%nat -> M i j = 0) ->
  (forall j, (j < n)%nat -> (S j < i)%nat -> M i j = 0) ->
  rsum n (fun j => Rabs (M i j)) <=
    Rabs (M i i) + (match i with O => 0 | S k => Rabs (M i k) end)
    + (if lt_dec (S i) n then Rabs (M i (S i)) else 0).
Proof.
  intros n M i Hi Hr Hl.
  set (pm := match i with O => 0 | S k => Rabs (M i k) end).
  set (pp := if lt_dec (S i) n then Rabs (M i (S i)) else 0).
  apply Rle_trans with (rsum n (fun j => (if Nat.eq_dec j i then Rabs (M i i) else 0)
                                     + ((if Nat.eq_dec (S j) i then pm else 0)
                                        + (if Nat.eq_dec j (S i) then Rabs (M i (S i)) else 0)))).
  - apply rsum_le. intros j Hj.
    destruct (Nat.eq_dec j i) as [->|H1].
    + destruct (Nat.eq_dec (S i) i); [lia|]. destruct (Nat.eq_dec i (S i)); [lia|]. lra.
    + destruct (Nat.eq_dec (S j) i) as [<-|H2].
      * destruct (Nat.eq_dec j (S (S j))); [lia|]. unfold pm. lra.
      * destruct (Nat.eq_dec j (S i)) as [->|H3]; [lra|].
        destruct (lt_dec (S i) j) as [Hlt|Hge].
        -- rewrite Hr by assumption. rewrite Rabs_R0. lra.
        -- rewrite Hl by lia. rewrite Rabs_R0. lra.
  - rewrite !rsum_add, !rsum_point.
    destruct (lt_dec i n); [|lia].
    assert (Hpm : rsum n (fun j => if Nat.eq_dec (S j) i then pm else 0) <= pm).
    { unfold pm. destruct i as [|k].
      - rewrite (rsum_ext n _ (fun _ => 0)); [rewrite rsum_zero; lra|].
        intros j _. destruct (Nat.eq_dec (S j) 0); [lia|reflexivity].
      - rewrite (rsum_ext n _ (fun j => if Nat.eq_dec j k then Rabs (M (S k) k) else 0)).
        + apply rsum_point_le, Rabs_pos.
        + intros j _. destruct (Nat.eq_dec (S j) (S k)), (Nat.eq_dec j k); try lia; reflexivity. }
    unfold pp. destruct (lt_dec (S i) n); lra.
Qed.

(** An eigenvalue [lam] (eigenvector [x <> 0]) of [M] satisfies
    [|lam - c| <= ||M - c I||_2]. *)
Theorem eigenvalue_in_opbound : forall n M c h lam x,
  opbound n n (fun i j => M i j - c * idm i j) h ->
  (forall i, (i < n)%nat -> mv n M x i = lam * x i) -> 0 < nsq n x ->
  Rabs (lam - c) <= h.
Proof.
  intros n M c h lam x [Hh HM] Hev Hx.
  specialize (HM x).
  rewrite (nsq_ext n _ (fun i => (lam - c) * x i)) in HM.
  2:{ intros i Hi. rewrite mv_sub, Hev by exact Hi.
      assert (E : mv n (fun a b => c * idm a b) x i = c * x i).
      { unfold mv. rewrite (rsum_ext n _ (fun j => c * (idm i j * x j))) by (intros; ring).
        rewrite rsum_scal. fold (mv n idm x i). rewrite mv_idm by exact Hi. reflexivity. }
      rewrite E. ring. }
  assert (E2 : nsq n (fun i => (lam - c) * x i) = (lam - c) * (lam - c) * nsq n x).
  { unfold nsq. rewrite <- rsum_scal. apply rsum_ext. intros; ring. }
  rewrite E2 in HM.
  assert (Hsq : (lam - c) * (lam - c) <= h * h) by (apply (Rmult_le_reg_r (nsq n x)); [exact Hx|lra]).
  apply Rabs_le. split; nra.
Qed.

Lemma trim_sym : forall d e i j, trim d e i j = trim d e j i.
Proof.
  intros d e i j. unfold trim.
  destruct (Nat.eq_dec i j) as [->|H1]; [destruct (Nat.eq_dec j j); [reflexivity|lia]|].
  destruct (Nat.eq_dec j i) as [E|_]; [lia|].
  destruct (Nat.eq_dec (S i) j) as [<-|H2].
  - destruct (Nat.eq_dec (S (S i)) i); [lia|]. destruct (Nat.eq_dec (S i) (S i)); [reflexivity|lia].
  - destruct (Nat.eq_dec (S j) i) as [<-|H3]; [destruct (Nat.eq_dec (S j) (S j)); [reflexivity|lia]|].
    reflexivity.
Qed.

Lemma trim_row : forall n d e i, (i < n)%nat ->
  rsum n (fun j => Rabs (trim d e i j)) <=
    Rabs (d i) + ((match i with O => 0 | S k => Rabs (e k) end) + (if lt_dec (S i) n then Rabs (e i) else 0)).
Proof.
  intros n d e i Hi.
  eapply Rle_trans.
  { apply (tridiag_row_le n (trim d e) i Hi); intros j _ Hj; unfold trim;
      destruct (Nat.eq_dec i j); try lia; destruct (Nat.eq_dec (S i) j); try lia;
      destruct (Nat.eq_dec (S j) i); try lia; reflexivity. }
  { unfold trim at 1. destruct (Nat.eq_dec i i); [|lia].
    assert (Hm : (match i with O => 0 | S k => Rabs (trim d e i k) end) = (match i with O => 0 | S k => Rabs (e k) end)).
    { destruct i as [|k]; [reflexivity|]. unfold trim.
      destruct (Nat.eq_dec (S k) k); [lia|]. destruct (Nat.eq_dec (S (S k)) k); [lia|].
      destruct (Nat.eq_dec (S k) (S k)); [reflexivity|lia]. }
    assert (Hp : (if lt_dec (S i) n then Rabs (trim d e i (S i)) else 0) = (if lt_dec (S i) n then Rabs (e i) else 0)).
    { destruct (lt_dec (S i) n); [|reflexivity]. unfold trim.
      destruct (Nat.eq_dec i (S i)); [lia|]. destruct (Nat.eq_dec (S i) (S i)); [reflexivity|lia]. }
    rewrite Hm, Hp. lra. }
Qed.

(** Gershgorin for [trim d e]: if [glo <= d i - r i] and [d i + r i <= ghi]
    for every row ([r i] = its off-diagonal absolute row sum), every
    eigenvalue lies in [[glo, ghi]]. *)
Theorem gershgorin_tridiagonal : forall n d e glo ghi lam x,
  (forall i, (i < n)%nat ->
     glo <= d i - ((match i with O => 0 | S k => Rabs (e k) end) + (if lt_dec (S i) n then Rabs (e i) else 0)) /\
     d i + ((match i with O => 0 | S k => Rabs (e k) end) + (if lt_dec (S i) n then Rabs (e i) else 0)) <= ghi) ->
  (forall i, (i < n)%nat -> mv n (trim d e) x i = lam * x i) -> 0 < nsq n x ->
  glo <= lam <= ghi.
Proof.
  intros n d e glo ghi lam x Hg Hev Hx.
  set (c := (glo + ghi) / 2). set (h := (ghi - glo) / 2).
  set (r := fun i => (match i with O => 0 | S k => Rabs (e k) end) + (if lt_dec (S i) n then Rabs (e i) else 0)).
  assert (Hr0 : forall i, 0 <= r i).
  { intros i. unfold r. destruct i as [|k]; destruct (lt_dec _ n);
      try (pose proof (Rabs_pos (e k))); try (pose proof (Rabs_pos (e (S k)))); try (pose proof (Rabs_pos (e O))); lra. }
  assert (Hn : (0 < n)%nat).
  { destruct n; [|lia]. unfold nsq in Hx. simpl in Hx. lra. }
  assert (Hh : 0 <= h) by (destruct (Hg O Hn) as [H1 H2]; fold (r O) in H1, H2; pose proof (Hr0 O); unfold h; lra).
  set (dc := fun i => d i - c).
  assert (Hrow : forall i, (i < n)%nat -> rsum n (fun j => Rabs (trim dc e i j)) <= h).
  { intros i Hi. eapply Rle_trans; [apply trim_row, Hi|]. fold (r i).
    destruct (Hg i Hi) as [H1 H2]. fold (r i) in H1, H2. unfold dc.
    apply Rabs_le_inv_helper; unfold c, h in *; lra. }
  assert (HM : opbound n n (fun i j => trim d e i j - c * idm i j) h).
  { apply (opbound_ext n n (trim dc e)).
    - intros i j _ _. unfold trim, idm, dc.
      destruct (Nat.eq_dec i j); [ring|]. rewrite Rmult_0_r, Rminus_0_r. reflexivity.
    - replace h with (sqrt (h * h)) by (rewrite sqrt_square; [reflexivity|exact Hh]).
      apply holder_bound; try assumption.
      intros j Hj. rewrite (rsum_ext n _ (fun i => Rabs (trim dc e j i))); [apply Hrow, Hj|].
      intros i _. rewrite trim_sym. reflexivity. }
  pose proof (eigenvalue_in_opbound n (trim d e) c h lam x HM Hev Hx) as H.
  assert (Ec : c = (glo + ghi) / 2) by reflexivity. assert (Eh : h = (ghi - glo) / 2) by reflexivity.
  clearbody c h. unfold Rabs in H. destruct (Rcase_abs (lam - c)); lra.
Qed.

(** ** Lemma 11.2's [beta] ([product._certify_stack_theorem_g]): for
    [d x d] floats [R = L^T], [G_hat], [P = fl(R G_hat)], [M_hat = fl(P R^T)]
    with Lemma 2.1's entrywise bounds (constant [kap = 2 d eta]),
    [||G_hat - G_A||_2 <= g], [||R||_2, || |R| ||_2 <= nL] and
    [|| |R||G_hat||R|^T ||_2 <= N]:
    [||M_hat - R G_A R^T||_2 <= gam(2+gam) N + nL g nL + kap d (1 + (1+gam) nL)]
    (the prose's bound; the code's [gamma_2d N + nL^2 g + 2 d^2 eta (1 + 2 nL)]
    is larger, [lemma_11_2_beta_constants]). *)
Theorem lemma_11_2_beta : forall d (R Gh GA P Mh : nat -> nat -> R) gam kap g nL N,
  0 <= gam -> 0 <= kap ->
  (forall i j, (i < d)%nat -> (j < d)%nat ->
     Rabs (Mh i j - mmul d P (mtr R) i j) <= gam * mmul d (mabs P) (mtr (mabs R)) i j + kap) ->
  (forall i l, (i < d)%nat -> (l < d)%nat ->
     Rabs (P i l - mmul d R Gh i l) <= gam * mmul d (mabs R) (mabs Gh) i l + kap) ->
  opbound d d (fun i j => Gh i j - GA i j) g ->
  opbound d d R nL -> opbound d d (mabs R) nL ->
  opbound d d (mmul d (mmul d (mabs R) (mabs Gh)) (mtr (mabs R))) N ->
  opbound d d (fun i j => Mh i j - mmul d (mmul d R GA) (mtr R) i j)
    (gam * (2 + gam) * N + nL * g * nL + kap * INR d * (1 + (1 + gam) * nL)).
Proof.
  intros d R Gh GA P Mh gam kap g nL N Hg Hk H1 H2 HG HR HaR HN.
  set (A := mmul d (mabs R) (mabs Gh)).
  set (N3 := mmul d A (mtr (mabs R))).
  set (C := fun i j : nat => rsum d (fun l => Rabs (R j l))).
  assert (HA0 : forall i l, 0 <= A i l).
  { intros i l. unfold A, mmul, mabs. apply rsum_nonneg. intros; apply Rmult_le_pos; apply Rabs_pos. }
  assert (HRGh : forall i l, Rabs (mmul d R Gh i l) <= A i l).
  { intros i l. unfold A, mmul, mabs. eapply Rle_trans; [apply rsum_abs|]. right.
    apply rsum_ext. intros; apply Rabs_mult. }
  (* |P| <= (1+gam) A + kap *)
  assert (HP : forall i l, (i < d)%nat -> (l < d)%nat -> Rabs (P i l) <= (1 + gam) * A i l + kap).
  { intros i l Hi Hl. pose proof (H2 i l Hi Hl) as H. pose proof (HRGh i l).
    assert (Rabs (P i l) <= Rabs (mmul d R Gh i l) + Rabs (P i l - mmul d R Gh i l)).
    { replace (P i l) with (mmul d R Gh i l + (P i l - mmul d R Gh i l)) at 1 by ring. apply Rabs_triang. }
    unfold A in *. lra. }
  (* the two product terms, entrywise *)
  assert (T1 : forall i j, (i < d)%nat -> (j < d)%nat ->
    mmul d (mabs P) (mtr (mabs R)) i j <= (1 + gam) * N3 i j + kap * C i j).
  { intros i j Hi Hj. unfold N3, C, mmul at 1 2, mtr, mabs.
    rewrite <- rsum_scal, <- rsum_scal, <- rsum_add. apply rsum_le. intros l Hl.
    pose proof (HP i l Hi Hl). pose proof (Rabs_pos (R j l)). fold (mabs R).
    unfold mabs. nra. }
  assert (T2 : forall i j, (i < d)%nat -> (j < d)%nat ->
    Rabs (mmul d (fun a b => P a b - mmul d R Gh a b) (mtr R) i j) <= gam * N3 i j + kap * C i j).
  { intros i j Hi Hj. unfold mmul at 1. eapply Rle_trans; [apply rsum_abs|].
    unfold N3, C, mmul at 2, mtr, mabs. rewrite <- rsum_scal, <- rsum_scal, <- rsum_add. apply rsum_le.
    intros l Hl. rewrite Rabs_mult. pose proof (H2 i l Hi Hl). pose proof (Rabs_pos (R j l)).
    unfold A in *. apply Rle_trans with ((gam * mmul d (mabs R) (mabs Gh) i l + kap) * Rabs (R j l));
      [apply Rmult_le_compat_r; assumption|]. right. unfold mabs. ring. }
  (* the decomposition *)
  set (T12 := fun i j => (Mh i j - mmul d P (mtr R) i j) + mmul d (fun a b => P a b - mmul d R Gh a b) (mtr R) i j).
  set (T3 := mmul d (mmul d R (fun a b => Gh a b - GA a b)) (mtr R)).
  assert (Edec : forall i j, (i < d)%nat -> (j < d)%nat ->
    Mh i j - mmul d (mmul d R GA) (mtr R) i j = T12 i j + T3 i j).
  { intros i j _ _. unfold T12, T3, mmul, mtr.
    replace (rsum d (fun l => (P i l - rsum d (fun k => R i k * Gh k l)) * R j l))
      with (rsum d (fun l => P i l * R j l) - rsum d (fun l => rsum d (fun k => R i k * Gh k l) * R j l))
      by (rewrite <- rsum_sub; apply rsum_ext; intros; ring).
    replace (rsum d (fun l => rsum d (fun k => R i k * (Gh k l - GA k l)) * R j l))
      with (rsum d (fun l => rsum d (fun k => R i k * Gh k l) * R j l) - rsum d (fun l => rsum d (fun k => R i k * GA k l) * R j l)).
    2:{ rewrite <- rsum_sub. apply rsum_ext. intros l _.
        replace (rsum d (fun k => R i k * (Gh k l - GA k l)))
          with (rsum d (fun k => R i k * Gh k l) - rsum d (fun k => R i k * GA k l)).
        - ring.
        - rewrite <- rsum_sub. apply rsum_ext. intros; ring. }
    ring. }
  assert (HT12 : opbound d d T12 (gam * (2 + gam) * N + kap * (1 + gam) * (INR d * nL) + kap * INR d)).
  { apply (opbound_mono d d T12 (fun i j => gam * (2 + gam) * N3 i j + kap * (1 + gam) * C i j + kap)).
    - intros i j Hi Hj. unfold T12. eapply Rle_trans; [apply Rabs_triang|].
      pose proof (H1 i j Hi Hj). pose proof (T1 i j Hi Hj). pose proof (T2 i j Hi Hj).
      assert (gam * mmul d (mabs P) (mtr (mabs R)) i j <= gam * ((1 + gam) * N3 i j + kap * C i j))
        by (apply Rmult_le_compat_l; assumption).
      nra.
    - replace (kap * INR d) with (kap * sqrt (INR d * INR d)) by (rewrite sqrt_square; [reflexivity|apply pos_INR]).
      apply opbound_add; [apply opbound_add|].
      + apply opbound_scal_nonneg; [exact HN|]. nra.
      + apply (opbound_ext d d (fun i j => kap * (1 + gam) * mmul d (fun _ _ => 1) (mtr (mabs R)) i j)).
        { intros i j _ _. unfold C, mmul, mtr, mabs. f_equal. apply rsum_ext. intros; ring. }
        apply opbound_scal_nonneg; [|nra].
        replace (INR d * nL) with ((1 * sqrt (INR d * INR d)) * nL)
          by (rewrite sqrt_square by apply pos_INR; ring).
        apply opbound_mul; [apply opbound_const; lra|apply opbound_transpose, HaR].
      + apply opbound_const, Hk. }
  assert (HT3 : opbound d d T3 (nL * g * nL)).
  { unfold T3. apply opbound_mul; [apply opbound_mul; assumption|apply opbound_transpose, HR]. }
  apply (opbound_ext d d (fun i j => T12 i j + T3 i j)); [intros i j Hi Hj; symmetry; apply Edec; assumption|].
  apply opbound_weaken with ((gam * (2 + gam) * N + kap * (1 + gam) * (INR d * nL) + kap * INR d) + nL * g * nL);
    [apply opbound_add; assumption|right; ring].
Qed.

(** Lemma 11.2's [eps] ([product._congruence_core]): from
    [n1], [ninf] bounding the column and row sums of [|G_hat_A|],
    [||G_A - G_hat_A|| <= errA], [||G_B - G_hat_B|| <= errB],
    [||G_hat_B - L L^T|| <= eRR]: [||G_A||_2 <= sqrt n1 sqrt ninf + errA]
    (the roots taken first, as the code does) and
    [||G_B - L L^T||_2 <= errB + eRR], so the code's
    [eps >= (sqrt n1 sqrt ninf + errA)(errB + eRR)] bounds
    [||G_A||_2 ||G_B - L L^T||_2]. *)
Theorem lemma_11_2_eps : forall d (GA Gh GB Gbh LLt : nat -> nat -> R) n1 ninf errA errB eRR,
  0 <= n1 -> 0 <= ninf ->
  (forall j, (j < d)%nat -> rsum d (fun i => Rabs (Gh i j)) <= n1) ->
  (forall i, (i < d)%nat -> rsum d (fun j => Rabs (Gh i j)) <= ninf) ->
  opbound d d (fun i j => GA i j - Gh i j) errA ->
  opbound d d (fun i j => GB i j - Gbh i j) errB ->
  opbound d d (fun i j => Gbh i j - LLt i j) eRR ->
  opbound d d GA (sqrt n1 * sqrt ninf + errA) /\ opbound d d (fun i j => GB i j - LLt i j) (errB + eRR).
Proof.
  intros d GA Gh GB Gbh LLt n1 ninf errA errB eRR Hn1 Hninf Hc Hr HA HB HR. split.
  - apply (opbound_ext d d (fun i j => Gh i j + (GA i j - Gh i j))); [intros; ring|].
    apply opbound_add; [|exact HA].
    rewrite <- sqrt_mult_alt by exact Hn1. rewrite Rmult_comm.
    apply holder_bound; assumption.
  - apply (opbound_ext d d (fun i j => (GB i j - Gbh i j) + (Gbh i j - LLt i j))); [intros; ring|].
    apply opbound_add; assumption.
Qed.
