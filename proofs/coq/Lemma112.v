(** * Lemma 11.2 (Theorem G for a product): the code's float steps, the proof's steps (a)-(c), the whole lemma

    Backs [proofs/enclosure.md] §11 Lemma 11.2 (its proof and its
    *Evaluation*; the second part of this file, after the float steps:
    steps (a)-(c) [lemma_11_2_congruence], the lemma [lemma_11_2_matrix]
    and the composition [certify_stack_theorem_g_sound]; on the same
    spectral facts also Theorems G and G-T of [enclosure-gram.md] §1, §1a:
    [theorem_g_matrix] ([gram.theorem_g_float_bounds]) and
    [theorem_gt_matrix] ([gram.tridiagonal_theorem_g_float_bounds])); code:
    [certbound/enclose/product.py] ([_certify_stack_theorem_g],
    [_congruence_core], [_abs_congruence_norm_upper],
    [_grams_and_abs_gram_norms] with [chain=False]).  The matrix-level
    steps that these feed ([NormBounds.lemma_11_2_beta],
    [NormBounds.lemma_11_2_eps], [TheoremGT.lemma_11_2_float]) were
    machine-checked before with the computed floats as hypotheses; here the
    floats are the code's operation sequences:

    - one entry of a classical product ([np.matmul]: any tree of the
      pairs, FMA or not) obeys Lemma 2.1 in [mmul] form
      ([mmul_entry_error]); one entry of [_stacked._mv] bounds the exact
      product of its (float) input vector ([mv_entry_upper]); a numpy
      [sum] of nonnegative floats (any tree) followed by [_inflate] bounds
      the exact sum ([sum_entry_upper]);
    - [_abs_congruence_norm_upper]: [v = _mv(|R|^T, 1)], [w = _mv(K, v)]
      with [K = max(|G|, |G|^T)], [z = _mv(|R|, w)], [N = max z] gives
      [|| |R||G||R|^T ||_2 <= N] ([abs_congruence_norm_upper],
      [abs_congruence_norm_upper_float]);
    - [_grams_and_abs_gram_norms(chain=False)]: [nu = _inflate(sum_l
      _inflate(fl(B^T B)_ll, n), d)] gives [|| |B|^T|B| ||_2 <= nu]
      ([gram_diag_nu_upper]);
    - [errA = up(up(gamma_upper(m) nKA) + _gram_underflow_upper(m, d))] gives
      [||A^T A - fl(A^T A)||_2 <= errA] for ANY classical evaluation of the
      Gram matrix ([gram_error_upper]);
    - [eps]: [n1 = max_j _inflate(sum_i |G_A_hat|_ij, d)], [ninf] (rows),
      [nGA = up(up(sqrt n1) up(sqrt ninf))], [eps = up(up(nGA + errA)
      up(errB + eRR))] is [>= a b] with [||G_A||_2 <= a],
      [||G_B - L L^T||_2 <= b] ([lemma_11_2_eps_float]);
    - [beta = up(up(up(gamma_upper(2d) N) + up(up(nL nL) errA)) + under)],
      [under = up(_core_underflow_upper(d,d,d) up(1 + 2 nL))] bounds
      [||M_hat - L^T G_A L||_2] for [P_hat = fl(L^T G_A_hat)],
      [M_hat = fl(P_hat L)] computed by ANY classical products
      ([lemma_11_2_beta_float]);
    - [c = up(up(beta + e) + eps)], [grow = up(1 + alU)],
      [shrink = max(down(1 - alU), 0)] satisfy the hypotheses of
      [TheoremGT.lemma_11_2_float] ([lemma_11_2_scalars]).

    [up]/[down] are [np.nextafter] toward [+-inf] after one rounded
    operation (Flocq's [succ]/[pred] of [FPModel.fl]); constants from Arb
    ([gamma_upper], [_gram_underflow_upper], [_core_underflow_upper]) are
    floats [>=] their exact values (F6, as hypotheses).  Overflow: every
    bound is tested [np.isfinite] ([IEEEFinite.v]: a finite result equals
    the [fl] model). *)

From Coq Require Import Reals Psatz List Permutation.
From Flocq Require Import Core Mult_error.
From Certbound Require Import FPModel Summation DotProduct FastCertificate MatvecChain NormBounds OneStep ResidualEntry
  TheoremG TheoremGFloat TheoremGT.
Import ListNotations.
Open Scope R_scope.

Local Notation succ := (succ radix2 fexp).
Local Notation pred := (pred radix2 fexp).

(** ** Lists over [seq 0 n] and [rsum] *)
Lemma lsum_map_seq : forall n (f : nat -> R), lsum (map f (seq 0 n)) = rsum n f.
Proof.
  induction n as [|n IH]; intros f; [reflexivity|].
  rewrite seq_S, map_app, lsum_app, IH. simpl. unfold lsum. simpl. ring.
Qed.

Lemma combine_map : forall {A B C : Type} (f : A -> B) (g : A -> C) s,
  combine (map f s) (map g s) = map (fun x => (f x, g x)) s.
Proof. intros A B C f g s. induction s as [|x s IH]; simpl; [reflexivity | rewrite IH; reflexivity]. Qed.

Lemma forall2_map : forall {A : Type} (P : R * R -> R -> Prop) (f : A -> R * R) (g : A -> R) s,
  (forall l, In l s -> P (f l) (g l)) -> Forall2 P (map f s) (map g s).
Proof.
  intros A P f g s. induction s as [|x s IH]; simpl; intros H; constructor; auto.
Qed.

Lemma in_seq0 : forall n l, In l (seq 0 n) -> (l < n)%nat.
Proof. intros n l H. apply in_seq in H. lia. Qed.

Lemma small_k : forall k : nat, INR k <= 2 ^ 40 -> INR k * u <= / 4.
Proof.
  intros k Hk. pose proof u_small. pose proof u_pos.
  apply Rle_trans with (2 ^ 40 * / 2 ^ 53); [|simpl; lra].
  apply Rmult_le_compat; [apply pos_INR | lra | exact Hk | lra].
Qed.

(** ** One entry of a classical product: Lemma 2.1 in [mmul] form
    (any tree of the [n] pairs [(X_ik, Y_kj)], FMA or not). *)
Theorem mmul_entry_error : forall n (X Y : nat -> nat -> R) i j (t : dtree),
  Permutation (dpairs t) (map (fun k => (X i k, Y k j)) (seq 0 n)) -> INR n * u <= / 2 ->
  Rabs (dfl t - mmul n X Y i j) <= gamma n * mmul n (mabs X) (mabs Y) i j + INR n * eta.
Proof.
  intros n X Y i j t Hp Hn.
  pose proof (dot_any_order _ t Hp) as H. rewrite map_length, seq_length in H.
  specialize (H Hn). unfold dot, absdot in H. rewrite !map_map in H. simpl in H.
  rewrite !lsum_map_seq in H. exact H.
Qed.

(** One entry of [_stacked._mv(M, v)] ([_inflate(fl(M v), n)], any tree):
    at least the exact [(M V)_i] for every [0 <= V <= v]. *)
Theorem mv_entry_upper : forall n (M : nat -> nat -> R) (v V : nat -> R) i (t : dtree),
  Permutation (dpairs t) (map (fun l => (M i l, v l)) (seq 0 n)) ->
  (forall l, (l < n)%nat -> 0 <= M i l /\ 0 <= V l <= v l) ->
  (1 <= n)%nat -> INR n <= 2 ^ 40 ->
  mv n M V i <= inflate n (dfl t).
Proof.
  intros n M v V i t Hp Hnn Hn1 Hn.
  assert (Hl : length (map (fun l => (M i l, v l)) (seq 0 n)) = n)
    by (rewrite map_length, seq_length; reflexivity).
  assert (HF : Forall (fun p => 0 <= fst p /\ 0 <= snd p) (map (fun l => (M i l, v l)) (seq 0 n))).
  { apply Forall_forall. intros p Hin. apply in_map_iff in Hin as (l & <- & Hin).
    apply in_seq0 in Hin. simpl. destruct (Hnn l Hin). lra. }
  assert (H2 : Forall2 (fun p B => 0 <= fst p /\ 0 <= B <= snd p)
                 (map (fun l => (M i l, v l)) (seq 0 n)) (map V (seq 0 n))).
  { apply forall2_map. intros l Hin. apply in_seq0 in Hin. simpl. apply Hnn, Hin. }
  pose proof (matvec_entry_upper _ _ t Hp HF H2) as H. rewrite Hl in H.
  specialize (H Hn1 Hn). rewrite combine_map, map_map in H. simpl in H.
  rewrite lsum_map_seq in H. exact H.
Qed.

Lemma sfl_nonneg : forall t, Forall (fun x => 0 <= x) (sleaves t) -> 0 <= sfl t.
Proof.
  induction t as [x | l IHl r IHr]; simpl; intros H.
  - inversion H; assumption.
  - apply Forall_app in H as [Hl Hr]. apply fl_nonneg. specialize (IHl Hl). specialize (IHr Hr). lra.
Qed.

(** A numpy [sum] of [n] nonnegative floats (any tree of rounded
    additions) followed by [_inflate(., n)] bounds the exact sum. *)
Theorem sum_entry_upper : forall n (x : nat -> R) (t : stree),
  Permutation (sleaves t) (map x (seq 0 n)) ->
  (forall l, (l < n)%nat -> format (x l) /\ 0 <= x l) ->
  (1 <= n)%nat -> INR n <= 2 ^ 40 ->
  rsum n x <= inflate n (sfl t).
Proof.
  intros n x t Hp Hx Hn1 Hn.
  assert (HF : Forall (fun y => format y /\ 0 <= y) (map x (seq 0 n))).
  { apply Forall_forall. intros y Hin. apply in_map_iff in Hin as (l & <- & Hin).
    apply Hx, in_seq0, Hin. }
  assert (HF' : Forall (fun y => format y /\ 0 <= y) (sleaves t)).
  { rewrite Forall_forall in *. intros y Hy. apply HF. eapply Permutation_in; [exact Hp | exact Hy]. }
  pose proof (small_k n Hn) as Hku.
  assert (Hlen : (length (map x (seq 0 n)) - 1 <= n)%nat) by (rewrite map_length, seq_length; lia).
  pose proof (sum_nonneg_bounds _ t n Hp HF Hlen Hku) as [_ H].
  rewrite lsum_map_seq in H.
  pose proof (gamma_small n Hku) as Hg. pose proof (gamma_nonneg n ltac:(lra)) as Hg0.
  assert (Hs0 : 0 <= sfl t).
  { apply sfl_nonneg. eapply Forall_impl; [|exact HF']. simpl. tauto. }
  assert (HS : 0 <= rsum n x) by (apply rsum_nonneg; intros l Hl; apply Hx, Hl).
  unfold inflate. apply inflate_upper; try assumption.
  - apply sfl_format. eapply Forall_impl; [|exact HF']. simpl. tauto.
  - assert ((1 - gamma n) * rsum n x <= sfl t).
    { apply Rmult_le_reg_r with (/ (1 - gamma n)); [apply Rinv_0_lt_compat; lra|].
      rewrite Rmult_comm, <- Rmult_assoc, Rinv_l, Rmult_1_l by lra. exact H. }
    pose proof eta_pos. pose proof (pos_INR n). nra.
Qed.

(** ** [_abs_congruence_norm_upper]: [|| |R||G||R|^T ||_2 <= max z] *)
Definition kmax (G : nat -> nat -> R) : nat -> nat -> R := fun i j => Rmax (Rabs (G i j)) (Rabs (G j i)).

Lemma rsum_mulr : forall n f c, rsum n f * c = rsum n (fun i => f i * c).
Proof. intros n f c. rewrite Rmult_comm, <- rsum_scal. apply rsum_ext. intros; ring. Qed.

Lemma mv_mono : forall n M x y i,
  (forall l, (l < n)%nat -> 0 <= M i l) -> (forall l, (l < n)%nat -> x l <= y l) ->
  mv n M x i <= mv n M y i.
Proof.
  intros n M x y i HM Hxy. unfold mv. apply rsum_le. intros l Hl.
  apply Rmult_le_compat_l; [apply HM | apply Hxy]; exact Hl.
Qed.

Lemma kmax_nonneg : forall G i j, 0 <= kmax G i j.
Proof. intros. unfold kmax. eapply Rle_trans; [apply Rabs_pos | apply Rmax_l]. Qed.

Theorem abs_congruence_norm_upper : forall d (Rt G : nat -> nat -> R) (v w z : nat -> R) N,
  (1 <= d)%nat ->
  (forall j, (j < d)%nat -> mv d (mtr (mabs Rt)) (fun _ => 1) j <= v j) ->
  (forall i, (i < d)%nat -> mv d (kmax G) v i <= w i) ->
  (forall i, (i < d)%nat -> mv d (mabs Rt) w i <= z i) ->
  (forall i, (i < d)%nat -> z i <= N) ->
  opbound d d (mmul d (mmul d (mabs Rt) (mabs G)) (mtr (mabs Rt))) N.
Proof.
  intros d Rt G v w z N Hd Hv Hw Hz HN.
  set (K := kmax G).
  set (N' := mmul d (mmul d (mabs Rt) K) (mtr (mabs Rt))).
  assert (Hexp : forall i j, N' i j = rsum d (fun l => rsum d (fun k => Rabs (Rt i k) * K k l * Rabs (Rt j l)))).
  { intros i j. unfold N', mmul, mtr, mabs. apply rsum_ext. intros l _. rewrite rsum_mulr. reflexivity. }
  assert (Hsym : forall i j, (i < d)%nat -> (j < d)%nat -> N' i j = N' j i).
  { intros i j _ _. rewrite !Hexp. rewrite rsum_swap. apply rsum_ext. intros k _. apply rsum_ext. intros l _.
    unfold K, kmax. rewrite (Rmax_comm (Rabs (G l k))). ring. }
  assert (Hnn : forall i j, (i < d)%nat -> (j < d)%nat -> 0 <= N' i j).
  { intros i j _ _. rewrite Hexp. apply rsum_nonneg. intros l _. apply rsum_nonneg. intros k _.
    pose proof (Rabs_pos (Rt i k)). pose proof (Rabs_pos (Rt j l)). pose proof (kmax_nonneg G k l).
    fold K in H1. apply Rmult_le_pos; [apply Rmult_le_pos|]; assumption. }
  set (V := mv d (mtr (mabs Rt)) (fun _ => 1)).
  assert (HV0 : forall l, 0 <= V l).
  { intros l. unfold V, mv, mtr, mabs. apply rsum_nonneg. intros; rewrite Rmult_1_r; apply Rabs_pos. }
  assert (Hrow : forall i, (i < d)%nat -> rsum d (fun j => N' i j) <= N).
  { intros i Hi.
    apply Rle_trans with (mv d N' (fun _ => 1) i); [right; unfold mv; apply rsum_ext; intros; ring|].
    unfold N'. rewrite mv_mmul, mv_mmul. fold V.
    apply Rle_trans with (mv d (mabs Rt) w i); [|apply Rle_trans with (z i); [apply Hz | apply HN]; exact Hi].
    apply mv_mono; [intros; apply Rabs_pos|]. intros l Hl.
    apply Rle_trans with (mv d K v l); [|apply Hw, Hl].
    apply mv_mono; [intros; apply kmax_nonneg|]. intros j Hj. apply Hv, Hj. }
  assert (HN0 : 0 <= N).
  { apply Rle_trans with (rsum d (fun j => N' O j)); [|apply Hrow; lia].
    apply rsum_nonneg. intros j Hj. apply Hnn; lia. }
  apply (opbound_mono d d _ N'); [|apply symmetric_rowsum_bound; assumption].
  intros i j Hi Hj. rewrite Hexp. unfold mmul, mtr, mabs.
  eapply Rle_trans; [apply rsum_abs|]. apply rsum_le. intros l Hl.
  rewrite rsum_mulr. eapply Rle_trans; [apply rsum_abs|]. apply rsum_le. intros k Hk.
  rewrite !Rabs_mult, !Rabs_Rabsolu. apply Rmult_le_compat_r; [apply Rabs_pos|].
  apply Rmult_le_compat_l; [apply Rabs_pos|]. unfold K, kmax. apply Rmax_l.
Qed.

(** The code's floats: each of [v], [w], [z] is [_stacked._mv] (one
    classical [np.matmul] then [_inflate(., d)]), and [N] their maximum. *)
Theorem abs_congruence_norm_upper_float : forall d (Rt G : nat -> nat -> R) (tv tw tz : nat -> dtree) N,
  (1 <= d)%nat -> INR d <= 2 ^ 40 ->
  (forall j, (j < d)%nat -> Permutation (dpairs (tv j)) (map (fun l => (mtr (mabs Rt) j l, 1)) (seq 0 d))) ->
  (forall i, (i < d)%nat ->
     Permutation (dpairs (tw i)) (map (fun l => (kmax G i l, inflate d (dfl (tv l)))) (seq 0 d))) ->
  (forall i, (i < d)%nat ->
     Permutation (dpairs (tz i)) (map (fun l => (mabs Rt i l, inflate d (dfl (tw l)))) (seq 0 d))) ->
  (forall i, (i < d)%nat -> inflate d (dfl (tz i)) <= N) ->
  opbound d d (mmul d (mmul d (mabs Rt) (mabs G)) (mtr (mabs Rt))) N.
Proof.
  intros d Rt G tv tw tz N Hd1 Hd Hpv Hpw Hpz HN.
  set (v := fun l => inflate d (dfl (tv l))). set (w := fun l => inflate d (dfl (tw l))).
  assert (Hv : forall j, (j < d)%nat -> mv d (mtr (mabs Rt)) (fun _ => 1) j <= v j).
  { intros j Hj. apply (mv_entry_upper d _ (fun _ => 1)); try assumption; [apply Hpv, Hj|].
    intros l _. unfold mtr, mabs. pose proof (Rabs_pos (Rt l j)). lra. }
  assert (Hv0 : forall l, (l < d)%nat -> 0 <= v l).
  { intros l Hl. eapply Rle_trans; [|apply Hv, Hl]. unfold mv, mtr, mabs.
    apply rsum_nonneg. intros; rewrite Rmult_1_r; apply Rabs_pos. }
  assert (Hw : forall i, (i < d)%nat -> mv d (kmax G) v i <= w i).
  { intros i Hi. apply (mv_entry_upper d _ v); try assumption; [apply Hpw, Hi|].
    intros l Hl. pose proof (kmax_nonneg G i l). pose proof (Hv0 l Hl). lra. }
  assert (Hw0 : forall l, (l < d)%nat -> 0 <= w l).
  { intros l Hl. eapply Rle_trans; [|apply Hw, Hl]. unfold mv. apply rsum_nonneg. intros j Hj.
    apply Rmult_le_pos; [apply kmax_nonneg | apply Hv0, Hj]. }
  apply (abs_congruence_norm_upper d Rt G v w (fun i => inflate d (dfl (tz i))) N Hd1 Hv Hw); [|exact HN].
  intros i Hi. apply (mv_entry_upper d _ w); try assumption; [apply Hpz, Hi|].
  intros l Hl. pose proof (Rabs_pos (Rt i l)). pose proof (Hw0 l Hl). unfold mabs. lra.
Qed.

(** [_stacked.abs_gram_norm2_upper] (Lemma 3.1's one chain, [nu_A] of
    [_grams_and_abs_gram_norms] with [chain=True]): [v = _mv(|X|, 1)],
    [out = max _mv(|X|^T, v)] bounds [|| |X|^T|X| ||_2] ([|X|^T|X|] is
    symmetric and nonnegative, its row sums are [(|X|^T(|X| 1))_j]). *)
Theorem abs_gram_norm2_upper_float : forall m r (X : nat -> nat -> R) (tv tw : nat -> dtree) N,
  (1 <= m)%nat -> INR m <= 2 ^ 40 -> (1 <= r)%nat -> INR r <= 2 ^ 40 ->
  (forall i, (i < m)%nat -> Permutation (dpairs (tv i)) (map (fun l => (mabs X i l, 1)) (seq 0 r))) ->
  (forall j, (j < r)%nat ->
     Permutation (dpairs (tw j)) (map (fun i => (mtr (mabs X) j i, inflate r (dfl (tv i)))) (seq 0 m))) ->
  (forall j, (j < r)%nat -> inflate m (dfl (tw j)) <= N) ->
  opbound r r (mmul m (mtr (mabs X)) (mabs X)) N.
Proof.
  intros m r X tv tw N Hm1 Hm Hr1 Hr Hpv Hpw HN.
  set (v := fun i => inflate r (dfl (tv i))).
  assert (Hv : forall i, (i < m)%nat -> mv r (mabs X) (fun _ => 1) i <= v i).
  { intros i Hi. apply (mv_entry_upper r _ (fun _ => 1)); try assumption; [apply Hpv, Hi|].
    intros l _. unfold mabs. pose proof (Rabs_pos (X i l)). lra. }
  assert (Hv0 : forall i, (i < m)%nat -> 0 <= v i).
  { intros i Hi. eapply Rle_trans; [|apply Hv, Hi]. unfold mv, mabs.
    apply rsum_nonneg. intros; rewrite Rmult_1_r; apply Rabs_pos. }
  set (N' := mmul m (mtr (mabs X)) (mabs X)).
  assert (Hsym : forall i j, (i < r)%nat -> (j < r)%nat -> N' i j = N' j i).
  { intros i j _ _. unfold N', mmul, mtr. apply rsum_ext. intros; ring. }
  assert (Hnn : forall i j, (i < r)%nat -> (j < r)%nat -> 0 <= N' i j).
  { intros i j _ _. unfold N', mmul, mtr, mabs. apply rsum_nonneg. intros; apply Rmult_le_pos; apply Rabs_pos. }
  assert (Hrow : forall j, (j < r)%nat -> rsum r (fun l => N' j l) <= N).
  { intros j Hj.
    apply Rle_trans with (mv r N' (fun _ => 1) j); [right; unfold mv; apply rsum_ext; intros; ring|].
    unfold N'. rewrite mv_mmul. apply Rle_trans with (2 := HN j Hj).
    apply Rle_trans with (mv m (mtr (mabs X)) v j).
    - apply mv_mono; [intros; unfold mtr, mabs; apply Rabs_pos | exact Hv].
    - apply (mv_entry_upper m _ v); try assumption; [apply Hpw, Hj|].
      intros i Hi. pose proof (Hv0 i Hi). unfold mtr, mabs. pose proof (Rabs_pos (X i j)). lra. }
  assert (HN0 : 0 <= N).
  { apply Rle_trans with (rsum r (fun l => N' O l)); [|apply Hrow; lia].
    apply rsum_nonneg. intros l Hl. apply Hnn; lia. }
  apply symmetric_rowsum_bound; assumption.
Qed.

(** [_inflate(fl(a b), 1)] bounds [a B] for [0 <= B <= b], [a >= 0]
    (one rounded product, Lemma 2.2 with [k = 1]). *)
Lemma inflate1_upper : forall a b B, 0 <= a -> 0 <= B <= b -> a * B <= inflate 1 (fl (a * b)).
Proof.
  intros a b B Ha HB.
  pose proof (matvec_entry_upper ((a, b) :: nil) (B :: nil) (DProd a b) (Permutation_refl _)
                ltac:(constructor; [simpl; lra | constructor]) ltac:(constructor; [simpl; lra | constructor])
                ltac:(simpl; lia) ltac:(simpl; lra)) as H.
  simpl in H. unfold lsum in H. simpl in H. rewrite Rplus_0_r in H. exact H.
Qed.

(** [_stacked.abs_symmetric_product_norm2_upper] (the a-priori term of
    [residual_norm_upper(W, X, s, X)]: Lemma 11.2's [e] and [eRR], Lemma
    11.1's [eRR]): [c = _mv(|X|^T, 1)], [c' = _inflate(|s| c, 1)] (or [c]
    when [s] is None: take [s = 1] and [c' = c]), [out = max _mv(|X|, c')]
    bounds [|| |X| diag(|s|) |X|^T ||_2] ([N] symmetric nonnegative, row
    sums [(|X|(|s| (|X|^T 1)))_i], F4). *)
Theorem abs_symmetric_product_norm2_upper_float : forall m r (X : nat -> nat -> R) (s : nat -> R)
    (tc tz : nat -> dtree) (c' : nat -> R) N,
  (1 <= m)%nat -> INR m <= 2 ^ 40 -> (1 <= r)%nat -> INR r <= 2 ^ 40 ->
  (forall l, (l < r)%nat -> Permutation (dpairs (tc l)) (map (fun i => (mtr (mabs X) l i, 1)) (seq 0 m))) ->
  (forall l, (l < r)%nat -> Rabs (s l) * inflate m (dfl (tc l)) <= c' l) ->
  (forall i, (i < m)%nat -> Permutation (dpairs (tz i)) (map (fun l => (mabs X i l, c' l)) (seq 0 r))) ->
  (forall i, (i < m)%nat -> inflate r (dfl (tz i)) <= N) ->
  opbound m m (mmul r (fun i l => Rabs (X i l) * Rabs (s l)) (mtr (mabs X))) N.
Proof.
  intros m r X s tc tz c' N Hm1 Hm Hr1 Hr Hpc Hc' Hpz HN.
  set (c := fun l => inflate m (dfl (tc l))).
  assert (Hc : forall l, (l < r)%nat -> mv m (mtr (mabs X)) (fun _ => 1) l <= c l).
  { intros l Hl. apply (mv_entry_upper m _ (fun _ => 1)); try assumption; [apply Hpc, Hl|].
    intros i _. unfold mtr, mabs. pose proof (Rabs_pos (X i l)). lra. }
  assert (Hc0 : forall l, (l < r)%nat -> 0 <= mv m (mtr (mabs X)) (fun _ => 1) l).
  { intros l _. unfold mv, mtr, mabs. apply rsum_nonneg. intros; rewrite Rmult_1_r; apply Rabs_pos. }
  assert (Hc'0 : forall l, (l < r)%nat -> 0 <= c' l).
  { intros l Hl. eapply Rle_trans; [|apply Hc', Hl]. apply Rmult_le_pos; [apply Rabs_pos|].
    eapply Rle_trans; [apply Hc0, Hl | apply Hc, Hl]. }
  set (N' := mmul r (fun i l => Rabs (X i l) * Rabs (s l)) (mtr (mabs X))).
  assert (Hsym : forall i j, (i < m)%nat -> (j < m)%nat -> N' i j = N' j i).
  { intros i j _ _. unfold N', mmul, mtr, mabs. apply rsum_ext. intros; ring. }
  assert (Hnn : forall i j, (i < m)%nat -> (j < m)%nat -> 0 <= N' i j).
  { intros i j _ _. unfold N', mmul, mtr, mabs. apply rsum_nonneg. intros.
    apply Rmult_le_pos; [apply Rmult_le_pos|]; apply Rabs_pos. }
  assert (Hrow : forall i, (i < m)%nat -> rsum m (fun j => N' i j) <= N).
  { intros i Hi.
    apply Rle_trans with (mv m N' (fun _ => 1) i); [right; unfold mv; apply rsum_ext; intros; ring|].
    unfold N'. rewrite mv_mmul. apply Rle_trans with (2 := HN i Hi).
    apply Rle_trans with (mv r (mabs X) c' i).
    - unfold mv at 1 2, mabs. apply rsum_le. intros l Hl.
      rewrite Rmult_assoc. apply Rmult_le_compat_l; [apply Rabs_pos|].
      eapply Rle_trans; [|apply Hc', Hl]. apply Rmult_le_compat_l; [apply Rabs_pos | apply Hc, Hl].
    - apply (mv_entry_upper r _ c'); try assumption; [apply Hpz, Hi|].
      intros l Hl. pose proof (Hc'0 l Hl). unfold mabs. pose proof (Rabs_pos (X i l)). lra. }
  assert (HN0 : 0 <= N).
  { apply Rle_trans with (rsum m (fun j => N' O j)); [|apply Hrow; lia].
    apply rsum_nonneg. intros j Hj. apply Hnn; lia. }
  apply symmetric_rowsum_bound; assumption.
Qed.

(** ** [_grams_and_abs_gram_norms(chain=False)]: [nu] from the diagonal of
    [fl(B^T B)]: [nu = _inflate(sum_l _inflate(g_ll, n), d) >=
    ||B||_F^2 >= || |B|^T|B| ||_2] ([g_ll] any classical evaluation of
    [sum_k b_kl^2]; F4: [||.||_2 <= ||.||_F]). *)
Fixpoint dabs_tree (t : dtree) : dtree :=
  match t with
  | DProd a b => DProd (Rabs a) (Rabs b)
  | DAdd l r => DAdd (dabs_tree l) (dabs_tree r)
  | DFma a b r => DFma (Rabs a) (Rabs b) (dabs_tree r)
  end.

Lemma abs_sq : forall a, Rabs a * Rabs a = a * a.
Proof. intros a. rewrite <- Rabs_mult. apply Rabs_pos_eq, Rle_0_sqr. Qed.

Lemma dabs_tree_squares : forall t, Forall (fun p => fst p = snd p) (dpairs t) ->
  dfl (dabs_tree t) = dfl t /\ dpairs (dabs_tree t) = map (fun p => (Rabs (fst p), Rabs (snd p))) (dpairs t).
Proof.
  induction t as [a b | l IHl r IHr | a b r IHr]; simpl; intros H.
  - inversion H as [|? ? E _]. simpl in E. subst b. rewrite abs_sq. split; reflexivity.
  - apply Forall_app in H as [Hl Hr]. destruct (IHl Hl) as [E1 P1]. destruct (IHr Hr) as [E2 P2].
    rewrite E1, E2, P1, P2, map_app. split; reflexivity.
  - inversion H as [|? ? E Hr]. simpl in E. subst b. destruct (IHr Hr) as [E2 P2].
    rewrite E2, P2, abs_sq. split; reflexivity.
Qed.

Lemma inflate_format : forall k v, format (inflate k v).
Proof. intros. apply fl_format. Qed.

(** One diagonal entry of [fl(B^T B)] (any classical evaluation of
    [sum_k b_kl^2]) then [_inflate(., n)] bounds the column's [||b_l||^2]. *)
Lemma gram_diag_colsq_upper : forall n (B : nat -> nat -> R) l (t : dtree),
  (1 <= n)%nat -> INR n <= 2 ^ 40 ->
  Permutation (dpairs t) (map (fun k => (B k l, B k l)) (seq 0 n)) ->
  rsum n (fun k => Rabs (B k l) * Rabs (B k l)) <= inflate n (dfl t).
Proof.
  intros n B l t Hn1 Hn Hp.
  assert (HF : Forall (fun p => fst p = snd p) (dpairs t)).
  { apply Forall_forall. intros p Hin. eapply Permutation_in in Hin; [|exact Hp].
    apply in_map_iff in Hin as (k & <- & _). reflexivity. }
  destruct (dabs_tree_squares t HF) as [E P]. rewrite <- E.
  apply (mv_entry_upper n (fun _ k => Rabs (B k l)) (fun k => Rabs (B k l)) (fun k => Rabs (B k l)) O);
    try assumption.
  - rewrite P. replace (map (fun k => (Rabs (B k l), Rabs (B k l))) (seq 0 n))
      with (map (fun p => (Rabs (fst p), Rabs (snd p))) (map (fun k => (B k l, B k l)) (seq 0 n)))
      by (rewrite map_map; reflexivity).
    apply Permutation_map, Hp.
  - intros k _. pose proof (Rabs_pos (B k l)). lra.
Qed.

Lemma rsum_term_le : forall n (f : nat -> R) k, (forall i, (i < n)%nat -> 0 <= f i) -> (k < n)%nat -> f k <= rsum n f.
Proof.
  induction n as [|n IH]; intros f k Hf Hk; [lia|]. simpl.
  destruct (Nat.eq_dec k n) as [->|Hne].
  - assert (0 <= rsum n f) by (apply rsum_nonneg; intros; apply Hf; lia). lra.
  - assert (f k <= rsum n f) by (apply IH; [intros; apply Hf; lia | lia]). pose proof (Hf n ltac:(lia)). lra.
Qed.

(** Lemma 8.1's [beta >= max |b_kl|] from the Gram diagonal
    ([_certify_stack_theorem_g] with [norms_21]):
    [bmax = up(sqrt(max_l _inflate(fl(B^T B)_ll, n)))]. *)
Theorem gram_diag_max_entry : forall n d (B : nat -> nat -> R) (tg : nat -> dtree) bm,
  (1 <= n)%nat -> INR n <= 2 ^ 40 ->
  (forall l, (l < d)%nat -> Permutation (dpairs (tg l)) (map (fun k => (B k l, B k l)) (seq 0 n))) ->
  (forall l, (l < d)%nat -> inflate n (dfl (tg l)) <= bm) ->
  forall k l, (k < n)%nat -> (l < d)%nat -> Rabs (B k l) <= succ (fl (sqrt bm)).
Proof.
  intros n d B tg bm Hn1 Hn Hp Hbm k l Hk Hl.
  apply step_up. rewrite <- (sqrt_square (Rabs (B k l))) by apply Rabs_pos.
  apply sqrt_le_1_alt. eapply Rle_trans; [|apply Hbm, Hl].
  eapply Rle_trans; [|apply (gram_diag_colsq_upper n B l (tg l) Hn1 Hn (Hp l Hl))].
  apply (rsum_term_le n (fun k => Rabs (B k l) * Rabs (B k l))); [intros; apply Rle_0_sqr | exact Hk].
Qed.

Theorem gram_diag_nu_upper : forall n d (B : nat -> nat -> R) (tg : nat -> dtree) (ts : stree) nu,
  (1 <= n)%nat -> INR n <= 2 ^ 40 -> (1 <= d)%nat -> INR d <= 2 ^ 40 ->
  (forall l, (l < d)%nat -> Permutation (dpairs (tg l)) (map (fun k => (B k l, B k l)) (seq 0 n))) ->
  Permutation (sleaves ts) (map (fun l => inflate n (dfl (tg l))) (seq 0 d)) ->
  nu = inflate d (sfl ts) ->
  opbound d d (mmul n (mtr (mabs B)) (mabs B)) nu.
Proof.
  intros n d B tg ts nu Hn1 Hn Hd1 Hd Hpg Hps Hnu.
  set (c := fun l => inflate n (dfl (tg l))).
  assert (Hc : forall l, (l < d)%nat -> rsum n (fun k => Rabs (B k l) * Rabs (B k l)) <= c l)
    by (intros l Hl; apply gram_diag_colsq_upper; auto).
  assert (Hc0 : forall l, (l < d)%nat -> format (c l) /\ 0 <= c l).
  { intros l Hl. split; [apply inflate_format|]. eapply Rle_trans; [|apply Hc, Hl].
    apply rsum_nonneg. intros; apply Rle_0_sqr. }
  pose proof (sum_entry_upper d c ts Hps Hc0 Hd1 Hd) as Hs. rewrite <- Hnu in Hs.
  assert (HF : rsum n (fun k => rsum d (fun l => mabs B k l * mabs B k l)) <= nu).
  { rewrite rsum_swap. eapply Rle_trans; [|exact Hs]. apply rsum_le. intros l Hl. apply Hc, Hl. }
  pose proof (frobenius_bound n d (mabs B) nu HF) as HB.
  assert (Hnu0 : 0 <= nu).
  { eapply Rle_trans; [|exact HF]. apply rsum_nonneg. intros; apply rsum_nonneg. intros; apply Rle_0_sqr. }
  replace nu with (sqrt nu * sqrt nu) by (apply sqrt_sqrt, Hnu0).
  apply opbound_mul; [apply opbound_transpose|]; exact HB.
Qed.

(** A Gram entry that the code gets as the mirror of another
    ([np.matmul(F.T, F)] is a SYRK: one triangle computed, the other
    copied) is the float of an evaluation of its OWN pairs: the mirror's
    tree with every pair swapped ([fl(a b) = fl(b a)]).  So the Gram
    hypotheses of this file ([Gh k l = dfl t], [t]'s pairs a permutation
    of [(a_rk, a_rl)]) hold for a SYRK's result ([gram_mirror_entry]). *)
Fixpoint dswap (t : dtree) : dtree :=
  match t with
  | DProd a b => DProd b a
  | DAdd l r => DAdd (dswap l) (dswap r)
  | DFma a b r => DFma b a (dswap r)
  end.

Lemma dswap_mirror : forall t, dfl (dswap t) = dfl t /\ dpairs (dswap t) = map (fun p => (snd p, fst p)) (dpairs t).
Proof.
  induction t as [a b | l IHl r IHr | a b r IHr]; simpl.
  - rewrite Rmult_comm. split; reflexivity.
  - destruct IHl as [E1 P1], IHr as [E2 P2]. rewrite E1, E2, P1, P2, map_app. split; reflexivity.
  - destruct IHr as [E2 P2]. rewrite E2, P2, Rmult_comm. split; reflexivity.
Qed.

Theorem gram_mirror_entry : forall m (A : nat -> nat -> R) k l (t : dtree),
  Permutation (dpairs t) (map (fun r => (A r k, A r l)) (seq 0 m)) ->
  Permutation (dpairs (dswap t)) (map (fun r => (A r l, A r k)) (seq 0 m)) /\ dfl (dswap t) = dfl t.
Proof.
  intros m A k l t Hp. destruct (dswap_mirror t) as [E P]. split; [|exact E].
  rewrite P. replace (map (fun r => (A r l, A r k)) (seq 0 m))
    with (map (fun p : R * R => (snd p, fst p)) (map (fun r => (A r k, A r l)) (seq 0 m)))
    by (rewrite map_map; reflexivity).
  apply Permutation_map, Hp.
Qed.

(** Lemma 8.1's [q_j] on the heads' route
    ([quantities._norm_21_from_quadratic_forms]):
    [q = _inflate(nK _inflate(fl(sum_l b_l^2), d), 1) >= |b|^T K |b|] for any
    [K] with [||K||_2 <= nK] ([K = |A|^T|A|], Lemma 3.1's chain) — by
    Cauchy-Schwarz, [x^T K x <= ||K||_2 ||x||^2] — and [fl(sum_l b_l^2)] any
    classical evaluation. *)
Theorem lemma_8_1_q_float : forall d (K : nat -> nat -> R) (b : nat -> R) (t : dtree) nK,
  (1 <= d)%nat -> INR d <= 2 ^ 40 -> opbound d d K nK ->
  Permutation (dpairs t) (map (fun l => (b l, b l)) (seq 0 d)) ->
  rsum d (fun k => Rabs (b k) * mv d K (fun l => Rabs (b l)) k) <= inflate 1 (fl (nK * inflate d (dfl t))).
Proof.
  intros d K b t nK Hd1 Hd [HnK HK] Hp.
  set (x := fun l => Rabs (b l)).
  assert (Hq : rsum d (fun k => x k * mv d K x k) <= nK * nsq d x).
  { pose proof (cauchy_schwarz d x (mv d K x)) as CS.
    change (rsum d (fun j => x j * x j)) with (nsq d x) in CS.
    change (rsum d (fun j => mv d K x j * mv d K x j)) with (nsq d (mv d K x)) in CS.
    pose proof (HK x) as H. pose proof (nsq_nonneg d x).
    apply le_of_sq_le; [|apply Rmult_le_pos; assumption].
    apply Rle_trans with (1 := CS).
    replace (nK * nsq d x * (nK * nsq d x)) with (nsq d x * (nK * nK * nsq d x)) by ring.
    apply Rmult_le_compat_l; assumption. }
  assert (Hs : nsq d x <= inflate d (dfl t)).
  { pose proof (gram_diag_colsq_upper d (fun k _ => b k) O t Hd1 Hd Hp) as H.
    unfold nsq, x. exact H. }
  eapply Rle_trans; [exact Hq|].
  eapply Rle_trans; [|apply (inflate1_upper nK (inflate d (dfl t)) (inflate d (dfl t))); [lra | split; [|lra]]].
  - apply Rmult_le_compat_l; [lra | exact Hs].
  - eapply Rle_trans; [apply nsq_nonneg | exact Hs].
Qed.

(** ** [errA]: [||A^T A - fl(A^T A)||_2 <= up(up(gu nK) + und)] for floats
    [gu >= gamma_m] ([gamma_upper(m)]), [nK >= || |A|^T|A| ||_2] and
    [und >= m d eta] (the code's [_gram_underflow_upper(m, d) >= 2 m d eta]:
    a factor 2 of slack); every entry of [fl(A^T A)] any classical dot
    product of length [m] (Lemmas 2.1, G.1's assembly). *)
Theorem gram_error_upper : forall m d (A Gh : nat -> nat -> R) (tG : nat -> nat -> dtree) nK gu und,
  INR m * u <= / 2 ->
  (forall i j, (i < d)%nat -> (j < d)%nat ->
     Permutation (dpairs (tG i j)) (map (fun k => (A k i, A k j)) (seq 0 m)) /\ Gh i j = dfl (tG i j)) ->
  opbound d d (mmul m (mtr (mabs A)) (mabs A)) nK ->
  gamma m <= gu -> INR m * INR d * eta <= und ->
  opbound d d (fun i j => mmul m (mtr A) A i j - Gh i j) (succ (fl (succ (fl (gu * nK)) + und))).
Proof.
  intros m d A Gh tG nK gu und Hm HG HnK Hgu Hund.
  pose proof (gamma_nonneg m ltac:(lra)) as Hg0. pose proof eta_pos as He.
  assert (HnK0 : 0 <= nK) by (destruct HnK; assumption).
  assert (H : opbound d d (fun i j => mmul m (mtr A) A i j - Gh i j) (gamma m * nK + INR m * eta * INR d)).
  { apply (lemma_g1_assembly d _ (mmul m (mtr (mabs A)) (mabs A))); try assumption.
    - intros i j _ _. unfold mmul, mtr, mabs. apply rsum_nonneg. intros; apply Rmult_le_pos; apply Rabs_pos.
    - apply Rmult_le_pos; [apply pos_INR | lra].
    - intros i j Hi Hj. destruct (HG i j Hi Hj) as [Hp E]. rewrite E, Rabs_minus_sym.
      exact (mmul_entry_error m (mtr A) A i j (tG i j) Hp Hm). }
  apply (opbound_weaken _ _ _ _ _ H). apply step_up.
  assert (gamma m * nK <= gu * nK) by (apply Rmult_le_compat_r; assumption).
  pose proof (step_up (gu * nK) (gu * nK) (Rle_refl _)). lra.
Qed.

(** ** [eps] ([_congruence_core]): [n1 = max _mv(|G_hat_A|^T, 1)] (column
    sums), [ninf = max _mv(|G_hat_A|, 1)] (row sums), then the code's
    chain. *)
Theorem lemma_11_2_eps_float : forall d (GA Gh GB Gbh LLt : nat -> nat -> R) (tc tr : nat -> dtree)
    n1 ninf errA errB eRR,
  (1 <= d)%nat -> INR d <= 2 ^ 40 ->
  (forall j, (j < d)%nat -> Permutation (dpairs (tc j)) (map (fun i => (mtr (mabs Gh) j i, 1)) (seq 0 d))) ->
  (forall i, (i < d)%nat -> Permutation (dpairs (tr i)) (map (fun j => (mabs Gh i j, 1)) (seq 0 d))) ->
  (forall j, (j < d)%nat -> inflate d (dfl (tc j)) <= n1) ->
  (forall i, (i < d)%nat -> inflate d (dfl (tr i)) <= ninf) ->
  opbound d d (fun i j => GA i j - Gh i j) errA ->
  opbound d d (fun i j => GB i j - Gbh i j) errB ->
  opbound d d (fun i j => Gbh i j - LLt i j) eRR ->
  let nGA := succ (fl (succ (fl (sqrt n1)) * succ (fl (sqrt ninf)))) in
  opbound d d GA (sqrt n1 * sqrt ninf + errA) /\
  opbound d d (fun i j => GB i j - LLt i j) (errB + eRR) /\
  (sqrt n1 * sqrt ninf + errA) * (errB + eRR)
    <= succ (fl (succ (fl (nGA + errA)) * succ (fl (errB + eRR)))).
Proof.
  intros d GA Gh GB Gbh LLt tc tr n1 ninf errA errB eRR Hd1 Hd Hpc Hpr Hc Hr HA HB HR nGA.
  assert (Hcs : forall j, (j < d)%nat -> rsum d (fun i => Rabs (Gh i j)) <= n1).
  { intros j Hj. eapply Rle_trans; [|apply Hc, Hj].
    eapply Rle_trans; [|apply (mv_entry_upper d (mtr (mabs Gh)) (fun _ => 1) (fun _ => 1) j (tc j)); try assumption].
    - right. unfold mv, mtr, mabs. apply rsum_ext. intros; ring.
    - apply Hpc, Hj.
    - intros i _. unfold mtr, mabs. pose proof (Rabs_pos (Gh i j)). lra. }
  assert (Hrs : forall i, (i < d)%nat -> rsum d (fun j => Rabs (Gh i j)) <= ninf).
  { intros i Hi. eapply Rle_trans; [|apply Hr, Hi].
    eapply Rle_trans; [|apply (mv_entry_upper d (mabs Gh) (fun _ => 1) (fun _ => 1) i (tr i)); try assumption].
    - right. unfold mv, mabs. apply rsum_ext. intros; ring.
    - apply Hpr, Hi.
    - intros j _. unfold mabs. pose proof (Rabs_pos (Gh i j)). lra. }
  assert (Hn10 : 0 <= n1) by (eapply Rle_trans; [|apply (Hcs O); lia]; apply rsum_nonneg; intros; apply Rabs_pos).
  assert (Hni0 : 0 <= ninf) by (eapply Rle_trans; [|apply (Hrs O); lia]; apply rsum_nonneg; intros; apply Rabs_pos).
  destruct (lemma_11_2_eps d GA Gh GB Gbh LLt n1 ninf errA errB eRR Hn10 Hni0 Hcs Hrs HA HB HR) as [H1 H2].
  split; [exact H1|]. split; [exact H2|].
  assert (HeA : 0 <= errA) by (destruct HA; assumption).
  assert (HeB : 0 <= errB + eRR) by (destruct HB, HR; lra).
  assert (Hs : 0 <= sqrt n1 * sqrt ninf) by (apply Rmult_le_pos; apply sqrt_pos).
  assert (HnGA : sqrt n1 * sqrt ninf <= nGA).
  { unfold nGA. apply up_mul; split; try apply sqrt_pos.
    - apply step_up, Rle_refl.
    - apply step_up, Rle_refl. }
  apply up_mul; split; try lra.
  - apply up_add; [exact HnGA | apply Rle_refl].
  - apply step_up, Rle_refl.
Qed.

(** ** [beta] ([_congruence_core]): for [R = L^T], [P_hat = fl(R G_hat)]
    and [M_hat = fl(P_hat R^T)] (each entry any classical dot product of
    length [d]), [||G_A - G_hat||_2 <= errA], [||R||_2, || |R| ||_2 <= nL]
    ([_stacked.norm2_upper(L)]), [|| |R||G_hat||R|^T ||_2 <= N] and floats
    [gu2 >= gamma_(2d)], [cu >= 2 d eta sqrt(d d)]: the code's [beta]
    bounds [||M_hat - R G_A R^T||_2] (Lemma 2.1 with [kap = d eta <= 2 d eta],
    [NormBounds.lemma_11_2_beta], [ResidualEntry.lemma_11_2_beta_constants]'s
    inequalities). *)
Lemma format_double : forall x, format x -> fl (2 * x) = 2 * x.
Proof.
  intros x Hx. apply fl_exact.
  replace (2 * x) with (x * bpow radix2 1) by (rewrite bpow_1; change (IZR (radix_val radix2)) with 2; ring).
  apply mult_bpow_pos_exact_FLT; [exact Hx | lia].
Qed.

Theorem lemma_11_2_beta_float : forall d (Rt Gh GA P Mh : nat -> nat -> R) (tP tM : nat -> nat -> dtree)
    errA nL N gu2 cu,
  INR (d + d) * u <= / 2 ->
  (forall i l, (i < d)%nat -> (l < d)%nat ->
     Permutation (dpairs (tP i l)) (map (fun k => (Rt i k, Gh k l)) (seq 0 d)) /\ P i l = dfl (tP i l)) ->
  (forall i j, (i < d)%nat -> (j < d)%nat ->
     Permutation (dpairs (tM i j)) (map (fun l => (P i l, mtr Rt l j)) (seq 0 d)) /\ Mh i j = dfl (tM i j)) ->
  opbound d d (fun i j => GA i j - Gh i j) errA ->
  opbound d d Rt nL -> opbound d d (mabs Rt) nL -> format nL ->
  opbound d d (mmul d (mmul d (mabs Rt) (mabs Gh)) (mtr (mabs Rt))) N ->
  gamma (d + d) <= gu2 -> 2 * INR d * eta * sqrt (INR d * INR d) <= cu ->
  let under := succ (fl (cu * succ (fl (1 + fl (2 * nL))))) in
  opbound d d (fun i j => Mh i j - mmul d (mmul d Rt GA) (mtr Rt) i j)
    (succ (fl (succ (fl (succ (fl (gu2 * N)) + succ (fl (succ (fl (nL * nL)) * errA)))) + under))).
Proof.
  intros d Rt Gh GA P Mh tP tM errA nL N gu2 cu Hd HP HM HA HR HaR HnLf HN Hgu Hcu under.
  pose proof u_pos. pose proof eta_pos. pose proof (pos_INR d) as Hd0.
  assert (Hd1 : INR d * u <= / 2).
  { apply Rle_trans with (INR (d + d) * u); [|exact Hd]. apply Rmult_le_compat_r; [lra|]. apply le_INR; lia. }
  pose proof (gamma_nonneg d ltac:(lra)) as Hg0.
  assert (HnL : 0 <= nL) by (destruct HR; assumption).
  assert (HeA : 0 <= errA) by (destruct HA; assumption).
  assert (HN0 : 0 <= N) by (destruct HN; assumption).
  assert (HG : opbound d d (fun i j => Gh i j - GA i j) errA).
  { apply (opbound_ext d d (fun i j => -1 * (GA i j - Gh i j))); [intros; ring|].
    replace errA with (Rabs (-1) * errA) by (rewrite Rabs_left by lra; ring). apply opbound_scal, HA. }
  assert (Hk : 0 <= 2 * INR d * eta) by nra.
  assert (Hprose := lemma_11_2_beta d Rt Gh GA P Mh (gamma d) (2 * INR d * eta) errA nL N Hg0 Hk).
  assert (Hbeta : opbound d d (fun i j => Mh i j - mmul d (mmul d Rt GA) (mtr Rt) i j)
            (gamma d * (2 + gamma d) * N + nL * errA * nL + 2 * INR d * eta * INR d * (1 + (1 + gamma d) * nL))).
  { apply Hprose; try assumption.
    - intros i j Hi Hj. destruct (HM i j Hi Hj) as [Hp E]. rewrite E.
      eapply Rle_trans; [exact (mmul_entry_error d P (mtr Rt) i j (tM i j) Hp Hd1)|].
      apply Rplus_le_compat_l. nra.
    - intros i l Hi Hl. destruct (HP i l Hi Hl) as [Hp E]. rewrite E.
      eapply Rle_trans; [exact (mmul_entry_error d Rt Gh i l (tP i l) Hp Hd1)|].
      apply Rplus_le_compat_l. nra. }
  apply (opbound_weaken _ _ _ _ _ Hbeta).
  (* the prose's constants below the code's (ResidualEntry.lemma_11_2_beta_constants' inequalities) *)
  pose proof (gamma_add d d ltac:(lra)) as Ga. pose proof (gamma_le_2ku d Hd1) as G1.
  assert (Hd2 : INR d * u <= / 4) by (rewrite plus_INR in Hd; lra).
  assert (G2 : gamma d <= 1) by lra.
  assert (E1 : gamma d * (2 + gamma d) * N <= gu2 * N).
  { apply Rmult_le_compat_r; [exact HN0|]. nra. }
  assert (Esq : sqrt (INR d * INR d) = INR d) by (apply sqrt_square, Hd0).
  assert (Hun : 2 * INR d * eta * INR d * (1 + (1 + gamma d) * nL) <= under).
  { unfold under. rewrite format_double by exact HnLf. apply step_up.
    rewrite Esq in Hcu.
    assert ((1 + gamma d) * nL <= 2 * nL) by (apply Rmult_le_compat_r; lra).
    assert (Hq1 : 1 + (1 + gamma d) * nL <= succ (fl (1 + 2 * nL))) by (apply step_up; lra).
    apply Rmult_le_compat; try lra; pose proof (Rmult_le_pos _ _ Hg0 HnL); nra. }
  assert (E2 : nL * errA * nL <= succ (fl (succ (fl (nL * nL)) * errA))).
  { replace (nL * errA * nL) with ((nL * nL) * errA) by ring.
    apply up_mul; split; try lra; [nra | apply step_up, Rle_refl]. }
  assert (E3 : gamma d * (2 + gamma d) * N <= succ (fl (gu2 * N))) by (apply step_up; exact E1).
  apply step_up. apply Rplus_le_compat; [|exact Hun].
  apply step_up. lra.
Qed.

(** ** [c], [grow], [shrink] of [_certify_stack_theorem_g]: the hypotheses
    of [TheoremGT.lemma_11_2_float] ([alU < 1] is tested). *)
Theorem lemma_11_2_scalars : forall beta e eps alU,
  alU < 1 ->
  beta + e + eps <= succ (fl (succ (fl (beta + e)) + eps)) /\
  1 + alU <= succ (fl (1 + alU)) /\
  0 <= Rmax (pred (fl (1 - alU))) 0 <= 1 - alU.
Proof.
  intros beta e eps alU Ha. split; [|split].
  - apply step_up. pose proof (step_up (beta + e) (beta + e) (Rle_refl _)). lra.
  - apply step_up, Rle_refl.
  - split; [apply Rmax_r|]. apply Rmax_lub; [apply step_down, Rle_refl | lra].
Qed.

(** * Steps (a)-(c) of Lemma 11.2's proof, and the whole lemma

    The matrix facts are named hypotheses on an eigenvalue function [eig]
    ([eig n M i]: the [i]-th largest eigenvalue, from 0, of the symmetric
    [n x n] matrix [M]; the libraries at hand have no spectral theorem):
    - [weyl] (F2): [|lambda_i(X) - lambda_i(Y)| <= ||X - Y||_2] for symmetric [X], [Y];
    - [gram_swap]: [Z Z^T] and [Z^T Z] ([Z] is [p x q]) have the same [i]-th
      eigenvalue for [i < min(p, q)] (both are [sigma_i(Z)^2]);
    - [gram_psd]: the eigenvalues of [Z Z^T] are [>= 0];
    - [eig_idm], [eig_sorted], [eig_diag]: the identity's eigenvalues are 1,
      they are sorted, a diagonal matrix's are its entries sorted descending;
    - [ostrowski] (Lemma G.0 of [enclosure-gram.md]).
    With these, (a)-(c) are PROVED ([lemma_11_2_congruence]): the prose's
    PSD square root [G_A^(1/2)] is replaced by [A] itself
    ([(A B^T)^T (A B^T)] and [A G_B A^T] share their first [d] eigenvalues,
    [A L L^T A^T = (A L)(A L)^T] and [(A L)^T (A L) = L^T G_A L]), and
    [||A E A^T||_2 <= ||A^T A||_2 ||E||_2] is proved ([gram_opbound_sqrt]);
    then Theorem G's hypotheses for [M_hat] are derived, and Lemma 11.2's
    float ends enclose [sigma_i(A B^T) = sqrt(lambda_i((A B^T)^T (A B^T)))]
    ([lemma_11_2_matrix]). *)

Definition symm (n : nat) (M : nat -> nat -> R) : Prop :=
  forall i j, (i < n)%nat -> (j < n)%nat -> M i j = M j i.

Lemma mmul_assoc : forall p q (A B C : nat -> nat -> R) i j,
  mmul q (mmul p A B) C i j = mmul p A (mmul q B C) i j.
Proof.
  intros p q A B C i j. unfold mmul.
  rewrite (rsum_ext q _ (fun l => rsum p (fun k => A i k * B k l * C l j)))
    by (intros l _; rewrite rsum_mulr; reflexivity).
  rewrite rsum_swap. apply rsum_ext. intros k _. rewrite <- rsum_scal. apply rsum_ext. intros; ring.
Qed.

Lemma mmul_ext_r : forall k (A B B' : nat -> nat -> R) i j,
  (forall l, (l < k)%nat -> B l j = B' l j) -> mmul k A B i j = mmul k A B' i j.
Proof. intros k A B B' i j H. unfold mmul. apply rsum_ext. intros l Hl. rewrite H by exact Hl. reflexivity. Qed.

Lemma mmul_ext_l : forall k (A A' B : nat -> nat -> R) i j,
  (forall l, (l < k)%nat -> A i l = A' i l) -> mmul k A B i j = mmul k A' B i j.
Proof. intros k A A' B i j H. unfold mmul. apply rsum_ext. intros l Hl. rewrite H by exact Hl. reflexivity. Qed.

Lemma mmul_sub_l : forall k (X Y C : nat -> nat -> R) i j,
  mmul k (fun a b => X a b - Y a b) C i j = mmul k X C i j - mmul k Y C i j.
Proof. intros. unfold mmul. rewrite <- rsum_sub. apply rsum_ext. intros; ring. Qed.

Lemma mmul_sub_r : forall k (A X Y : nat -> nat -> R) i j,
  mmul k A (fun a b => X a b - Y a b) i j = mmul k A X i j - mmul k A Y i j.
Proof. intros. unfold mmul. rewrite <- rsum_sub. apply rsum_ext. intros; ring. Qed.

Lemma gram_symm : forall p q (Z : nat -> nat -> R), symm p (mmul q Z (mtr Z)).
Proof. intros p q Z i j _ _. unfold mmul, mtr. apply rsum_ext. intros; ring. Qed.

(** [(A B^T)(A B^T)^T = A (B^T B) A^T] ([A]: [p x k], [B]: [q x k]). *)
Lemma gram_of_product : forall k q (A B : nat -> nat -> R) i j,
  mmul q (mmul k A (mtr B)) (mtr (mmul k A (mtr B))) i j = mmul k (mmul k A (mmul q (mtr B) B)) (mtr A) i j.
Proof.
  intros k q A B i j.
  rewrite (mmul_assoc k k A (mmul q (mtr B) B) (mtr A)).
  transitivity (mmul q (mmul k A (mtr B)) (mmul k B (mtr A)) i j).
  { unfold mmul at 1 3. apply rsum_ext. intros l _. unfold mtr at 2. unfold mmul, mtr. f_equal.
    apply rsum_ext. intros; ring. }
  rewrite mmul_assoc. apply mmul_ext_r. intros l _. symmetry. apply mmul_assoc.
Qed.

(** [(A L)^T (A L) = L^T (A^T A) L]. *)
Lemma gram_AL : forall m d (A L : nat -> nat -> R) p q,
  mmul m (mtr (mmul d A L)) (mmul d A L) p q = mmul d (mmul d (mtr L) (mmul m (mtr A) A)) L p q.
Proof.
  intros m d A L p q.
  transitivity (mmul m (mmul d (mtr L) (mtr A)) (mtr (mmul d (mtr L) (mtr A))) p q).
  { unfold mmul at 1 3. apply rsum_ext. intros r _. unfold mtr at 1 3. unfold mmul, mtr. f_equal.
    - apply rsum_ext. intros; ring.
    - apply rsum_ext. intros; ring. }
  exact (gram_of_product d m (mtr L) A p q).
Qed.

(** [||A||_2^2 <= ||A^T A||_2]: [||A y||^2 = y^T (A^T A) y] and Cauchy-Schwarz. *)
Theorem gram_opbound_sqrt : forall m d (A : nat -> nat -> R) a,
  opbound d d (mmul m (mtr A) A) a -> opbound m d A (sqrt a).
Proof.
  intros m d A a [Ha HG]. split; [apply sqrt_pos|]. intros y.
  rewrite sqrt_sqrt by exact Ha.
  assert (E : nsq m (mv d A y) = rsum d (fun j => y j * mv d (mmul m (mtr A) A) y j)).
  { rewrite (rsum_ext d (fun j => y j * mv d (mmul m (mtr A) A) y j)
               (fun j => rsum m (fun i => y j * A i j * mv d A y i))).
    2:{ intros j _. rewrite mv_mmul.
        change (mv m (mtr A) (mv d A y) j) with (rsum m (fun i => mtr A j i * mv d A y i)).
        rewrite <- rsum_scal. apply rsum_ext. intros; unfold mtr; ring. }
    rewrite rsum_swap. unfold nsq. apply rsum_ext. intros i _.
    rewrite <- (rsum_mulr d (fun j => y j * A i j) (mv d A y i)). f_equal.
    unfold mv. apply rsum_ext. intros; ring. }
  pose proof (cauchy_schwarz d y (mv d (mmul m (mtr A) A) y)) as CS.
  pose proof (HG y) as HGy.
  change (rsum d (fun j => y j * y j)) with (nsq d y) in CS.
  change (rsum d (fun j => mv d (mmul m (mtr A) A) y j * mv d (mmul m (mtr A) A) y j))
    with (nsq d (mv d (mmul m (mtr A) A) y)) in CS.
  rewrite <- E in CS.
  pose proof (nsq_nonneg d y). pose proof (nsq_nonneg m (mv d A y)).
  pose proof (nsq_nonneg d (mv d (mmul m (mtr A) A) y)).
  apply le_of_sq_le; [|apply Rmult_le_pos; assumption].
  apply Rle_trans with (1 := CS).
  replace (a * nsq d y * (a * nsq d y)) with (nsq d y * (a * a * nsq d y)) by ring.
  apply Rmult_le_compat_l; assumption.
Qed.

Section Spectral.
Variable eig : nat -> (nat -> nat -> R) -> nat -> R.
Hypothesis weyl : forall n X Y c, symm n X -> symm n Y ->
  opbound n n (fun i j => X i j - Y i j) c -> forall i, (i < n)%nat -> Rabs (eig n X i - eig n Y i) <= c.
Hypothesis gram_swap : forall p q (Z : nat -> nat -> R) i, (i < p)%nat -> (i < q)%nat ->
  eig p (mmul q Z (mtr Z)) i = eig q (mmul p (mtr Z) Z) i.

Lemma eig_ext : forall n X Y i, symm n X ->
  (forall a b, (a < n)%nat -> (b < n)%nat -> X a b = Y a b) -> (i < n)%nat -> eig n X i = eig n Y i.
Proof.
  intros n X Y i HX Hxy Hi.
  assert (HY : symm n Y) by (intros a b Ha Hb; rewrite <- !Hxy by assumption; apply HX; assumption).
  assert (H0 : opbound n n (fun a b => X a b - Y a b) 0).
  { apply (opbound_ext n n (fun _ _ => 0)); [intros a b Ha Hb; rewrite Hxy by assumption; ring | apply opbound_zero]. }
  pose proof (weyl n X Y 0 HX HY H0 i Hi) as H. pose proof (Rabs_pos (eig n X i - eig n Y i)).
  apply Rabs_le_inv in H. lra.
Qed.

(** Steps (a)-(c): for [A] ([m x d]), [B] ([n x d]), any [L] ([d x d]),
    [d <= m, n], [||A^T A||_2 <= a] and [||B^T B - L L^T||_2 <= b]:
    [|sigma_i(A B^T)^2 - lambda_i(L^T A^T A L)| <= a b] for [i < d]. *)
Theorem lemma_11_2_congruence : forall m n d (A B L : nat -> nat -> R) a b i,
  (d <= m)%nat -> (d <= n)%nat -> (i < d)%nat ->
  opbound d d (mmul m (mtr A) A) a ->
  opbound d d (fun k l => mmul n (mtr B) B k l - mmul d L (mtr L) k l) b ->
  Rabs (eig n (mmul m (mtr (mmul d A (mtr B))) (mmul d A (mtr B))) i
        - eig d (mmul d (mmul d (mtr L) (mmul m (mtr A) A)) L) i) <= a * b.
Proof.
  intros m n d A B L a b i Hm Hn Hi HA HB.
  set (W := mmul d A (mtr B)).
  set (T := mmul d (mmul d A (mmul n (mtr B) B)) (mtr A)).
  set (T' := mmul d (mmul d A (mmul d L (mtr L))) (mtr A)).
  set (Y := mmul d A L).
  assert (HiM : (i < m)%nat) by lia. assert (HiN : (i < n)%nat) by lia.
  (* (a): sigma_i(W)^2 = lambda_i(W^T W) = lambda_i(W W^T) = lambda_i(A G_B A^T) *)
  assert (E1 : eig n (mmul m (mtr W) W) i = eig m T i).
  { rewrite <- (gram_swap m n W i HiM HiN). apply eig_ext; [apply gram_symm | | exact HiM].
    intros k l _ _. apply gram_of_product. }
  (* (c): lambda_i(A L L^T A^T) = lambda_i(Y Y^T) = lambda_i(Y^T Y) = lambda_i(L^T G_A L) *)
  assert (E2 : eig m T' i = eig d (mmul d (mmul d (mtr L) (mmul m (mtr A) A)) L) i).
  { transitivity (eig m (mmul d Y (mtr Y)) i).
    - symmetry. apply eig_ext; [apply gram_symm | | exact HiM]. intros k l _ _. unfold Y.
      exact (gram_of_product d d A (mtr L) k l).
    - rewrite (gram_swap m d Y i HiM Hi). apply eig_ext; [| | exact Hi].
      + intros k l _ _. unfold mmul, mtr. apply rsum_ext. intros; ring.
      + intros k l _ _. unfold Y. apply gram_AL. }
  (* (b): Weyl on T - T' = A (G_B - L L^T) A^T, ||.|| <= ||A||^2 b <= a b *)
  assert (HsT : symm m T).
  { intros k l Hk Hl. unfold T. rewrite <- !(gram_of_product d n A B). exact (gram_symm m n _ k l Hk Hl). }
  assert (HsT' : symm m T').
  { intros k l Hk Hl. unfold T'. rewrite <- !(gram_of_product d d A (mtr L)). exact (gram_symm m d _ k l Hk Hl). }
  assert (HD : opbound m m (fun k l => T k l - T' k l) (a * b)).
  { pose proof (gram_opbound_sqrt m d A a HA) as HsA.
    assert (Ha : 0 <= a) by (destruct HA; assumption).
    apply (opbound_ext m m (mmul d (mmul d A (fun k l => mmul n (mtr B) B k l - mmul d L (mtr L) k l)) (mtr A))).
    - intros k l _ _. unfold T, T'. rewrite <- mmul_sub_l. apply mmul_ext_l. intros r _. apply mmul_sub_r.
    - replace (a * b) with (sqrt a * b * sqrt a)
        by (replace (sqrt a * b * sqrt a) with (sqrt a * sqrt a * b) by ring; rewrite sqrt_sqrt by exact Ha; ring).
      apply opbound_mul; [apply opbound_mul|apply opbound_transpose]; assumption. }
  pose proof (weyl m T T' (a * b) HsT HsT' HD i HiM) as Hw.
  fold W. rewrite E1, <- E2. exact Hw.
Qed.

Hypothesis gram_psd : forall p q (Z : nat -> nat -> R) i, (i < p)%nat -> 0 <= eig p (mmul q Z (mtr Z)) i.
Hypothesis eig_idm : forall n i, (i < n)%nat -> eig n idm i = 1.
Hypothesis eig_sorted : forall n M i j, symm n M -> (i <= j < n)%nat -> eig n M j <= eig n M i.
Definition diagm (lam : nat -> R) : nat -> nat -> R := fun i j => if Nat.eq_dec i j then lam i else 0.
Hypothesis eig_diag : forall k (lam lv : nat -> R),
  Permutation (map lam (seq 0 k)) (map lv (seq 0 k)) -> (forall i j, (i <= j < k)%nat -> lv j <= lv i) ->
  forall i, (i < k)%nat -> eig k (diagm lam) i = lv i.
Hypothesis ostrowski : forall k (S Am : nat -> nat -> R) i, symm k Am ->
  0 < eig k (mmul k (mtr S) S) (k - 1)%nat -> (i < k)%nat ->
  exists th, eig k (mmul k (mtr S) S) (k - 1)%nat <= th <= eig k (mmul k (mtr S) S) O /\
             eig k (mmul k (mmul k S Am) (mtr S)) i = th * eig k Am i.

Lemma diag_congruence : forall d (U : nat -> nat -> R) lam k l,
  mmul d (mmul d U (diagm lam)) (mtr U) k l = rsum d (fun r => U k r * lam r * U l r).
Proof.
  intros d U lam k l. unfold mmul at 1. apply rsum_ext. intros s Hs. unfold mtr. f_equal.
  unfold mmul, diagm.
  rewrite (rsum_ext d _ (fun r => if Nat.eq_dec r s then U k s * lam s else 0)).
  - rewrite rsum_point. destruct (lt_dec s d); [reflexivity | lia].
  - intros r _. destruct (Nat.eq_dec r s) as [->|]; ring.
Qed.

Lemma g_ends_ext : forall la lb c g s i, la i = lb i ->
  g_lower_end la c g s i = g_lower_end lb c g s i /\ g_upper_end la c g s i = g_upper_end lb c g s i.
Proof. intros la lb c g s i E. unfold g_lower_end, g_upper_end, lsq, hsq, pl, ph, f_lo, f_hi. rewrite E. split; reflexivity. Qed.

(** Lemma 11.2 with its float ends: [sigma_i(A B^T)], [i < d], lies between
    the code's ends for [lv] ([eigh]'s [lambda] sorted descending), [c],
    [grow], [shrink] whenever [||U^T U - I|| <= alpha < 1],
    [||M_hat - L^T G_A L|| <= beta], [||M_hat - U diag(lambda) U^T|| <= e],
    [||G_A|| <= a], [||G_B - L L^T|| <= b], [a b <= eps] and the
    floats satisfy [TheoremGT.lemma_11_2_float]'s hypotheses
    ([lemma_11_2_scalars]). *)
Theorem lemma_11_2_matrix : forall m n d (A B L Mh U : nat -> nat -> R) (lam lv : nat -> R)
    alpha beta e a b eps c grow shrink i,
  (1 <= d)%nat -> (d <= m)%nat -> (d <= n)%nat -> (i < d)%nat ->
  Permutation (map lam (seq 0 d)) (map lv (seq 0 d)) -> (forall k l, (k <= l < d)%nat -> lv l <= lv k) ->
  opbound d d (fun k l => mmul d (mtr U) U k l - idm k l) alpha -> alpha < 1 ->
  opbound d d (fun k l => Mh k l - mmul d (mmul d (mtr L) (mmul m (mtr A) A)) L k l) beta ->
  opbound d d (fun k l => Mh k l - mmul d (mmul d U (diagm lam)) (mtr U) k l) e ->
  opbound d d (mmul m (mtr A) A) a ->
  opbound d d (fun k l => mmul n (mtr B) B k l - mmul d L (mtr L) k l) b -> a * b <= eps ->
  beta + e + eps <= c -> 1 + alpha <= grow -> 0 <= shrink <= 1 - alpha ->
  let sigma := sqrt (eig n (mmul m (mtr (mmul d A (mtr B))) (mmul d A (mtr B))) i) in
  g_lower_end lv c grow shrink i <= sigma <= g_upper_end lv c grow shrink i.
Proof.
  intros m n d A B L Mh U lam lv alpha beta e a b eps c grow shrink i Hd1 Hm Hn Hi Hperm Hsort
    HU Hal HM HE HA HB Hab Hc Hg Hs sigma.
  set (Wt := mmul m (mtr (mmul d A (mtr B))) (mmul d A (mtr B))).
  set (M' := mmul d (mmul d (mtr L) (mmul m (mtr A) A)) L).
  set (H := mmul d (mmul d U (diagm lam)) (mtr U)).
  set (UU := mmul d (mtr U) U).
  set (mu_min := eig d UU (d - 1)%nat). set (mu_max := eig d UU O).
  assert (HsM' : symm d M').
  { intros k l Hk Hl. unfold M'. rewrite <- !gram_AL. exact (gram_symm d m (mtr (mmul d A L)) k l Hk Hl). }
  assert (HsH : symm d H).
  { intros k l Hk Hl. unfold H. rewrite !diag_congruence. apply rsum_ext. intros; ring. }
  assert (HsUU : symm d UU) by (intros k l _ _; unfold UU, mmul, mtr; apply rsum_ext; intros; ring).
  (* Theorem G's hypotheses for M_hat *)
  assert (HwU : forall k, (k < d)%nat -> Rabs (eig d UU k - 1) <= alpha).
  { intros k Hk. rewrite <- (eig_idm d k Hk). apply weyl; try assumption.
    intros p q _ _. unfold idm. destruct (Nat.eq_dec p q), (Nat.eq_dec q p); subst; try reflexivity; lia. }
  assert (HwEU : 1 - alpha <= mu_min /\ mu_min <= mu_max /\ mu_max <= 1 + alpha).
  { pose proof (HwU (d - 1)%nat ltac:(lia)) as H1. pose proof (HwU O ltac:(lia)) as H2.
    apply Rabs_le_inv in H1. apply Rabs_le_inv in H2.
    pose proof (eig_sorted d UU O (d - 1)%nat HsUU ltac:(lia)). unfold mu_min, mu_max. lra. }
  set (lH := fun k => if lt_dec k d then eig d H k else 0).
  set (lM := fun k => if lt_dec k d then eig d M' k else 0).
  set (lv' := fun k => if lt_dec k d then lv k else 0).
  set (sP := fun k => if lt_dec k d then sqrt (eig n Wt k) else 0).
  assert (Hdiag : symm d (diagm lam)).
  { intros p q _ _. unfold diagm. destruct (Nat.eq_dec p q), (Nat.eq_dec q p); subst; try reflexivity; lia. }
  assert (Hostr : forall k,
    (0 <= lv' k -> mu_min * lv' k <= lH k <= mu_max * lv' k) /\
    (lv' k < 0 -> mu_max * lv' k <= lH k <= mu_min * lv' k)).
  { intros k. unfold lv', lH. destruct (lt_dec k d) as [Hk|Hk]; [|split; intros; lra].
    destruct (ostrowski d U (diagm lam) k Hdiag ltac:(fold UU mu_min; lra) Hk) as (th & Hth & Eth).
    fold UU mu_min mu_max in Hth. fold H in Eth. rewrite Eth, (eig_diag d lam lv Hperm Hsort k Hk).
    split; intros; split; nra. }
  assert (Hbeta0 : 0 <= beta) by (destruct HM; assumption).
  assert (He0 : 0 <= e) by (destruct HE; assumption).
  assert (Hadd : forall k, Rabs (lM k - lH k) <= e + beta).
  { intros k. unfold lM, lH. destruct (lt_dec k d) as [Hk|Hk]; [|rewrite Rminus_0_r, Rabs_R0; lra].
    apply weyl; try assumption.
    apply (opbound_ext d d (fun p q => (Mh p q - H p q) + (-1) * (Mh p q - M' p q))); [intros; ring|].
    apply opbound_add; [exact HE|].
    replace beta with (Rabs (-1) * beta) by (rewrite Rabs_left by lra; ring). apply opbound_scal, HM. }
  assert (Ha0 : 0 <= a) by (destruct HA; assumption). assert (Hb0 : 0 <= b) by (destruct HB; assumption).
  assert (Hcong : forall k, Rabs (sP k ^ 2 - lM k) <= a * b).
  { intros k. unfold sP, lM. destruct (lt_dec k d) as [Hk|Hk]; [|simpl; rewrite Rmult_0_l, Rminus_0_r, Rabs_R0; nra].
    rewrite pow2_sqrt.
    - apply (lemma_11_2_congruence m n d A B L a b k Hm Hn Hk HA HB).
    - apply (gram_psd n m (mtr (mmul d A (mtr B))) k). lia. }
  assert (HsP0 : forall k, 0 <= sP k) by (intros k; unfold sP; destruct (lt_dec k d); [apply sqrt_pos | lra]).
  assert (HlM0 : forall k, 0 <= lM k).
  { intros k. unfold lM. destruct (lt_dec k d) as [Hk|Hk]; [|lra].
    assert (E : eig d M' k = eig d (mmul m (mtr (mmul d A L)) (mmul d A L)) k).
    { apply eig_ext; [exact HsM' | | exact Hk]. intros p q _ _. unfold M'. symmetry. apply gram_AL. }
    rewrite E. apply (gram_psd d m (mtr (mmul d A L)) k Hk). }
  pose proof (lemma_11_2_float sP lM lH lv' mu_min mu_max alpha beta e (a * b) HsP0 HlM0 HwEU Hostr Hadd Hcong
                alpha beta e eps ltac:(lra) ltac:(lra) ltac:(lra) Hab c grow shrink Hc Hg Hs i) as Hf.
  destruct (g_ends_ext lv' lv c grow shrink i) as [E1 E2]; [unfold lv'; destruct (lt_dec i d); [reflexivity | lia]|].
  rewrite E1, E2 in Hf. unfold sP in Hf. destruct (lt_dec i d); [|lia]. exact Hf.
Qed.

(** ** Theorems G and G-T ([enclosure-gram.md] §1, §1a) on the same
    spectral facts: their matrix hypotheses ([TheoremG.v]'s
    [weyl_eig_U], [ostrowski], [weyl_additive]; [TheoremGT.v]'s
    [weyl_eig_Q], [ostrowski_t], [weyl_additive]) are derived here from
    Weyl, Ostrowski (Lemma G.0) and the eigenvalues of [I] and of a
    diagonal matrix, for any [G_hat] (not necessarily symmetric): the
    triangle inequality through [G_hat] is proved. *)
Lemma congruence_symm : forall d (U Am : nat -> nat -> R), symm d Am -> symm d (mmul d (mmul d U Am) (mtr U)).
Proof.
  intros d U Am HA k l Hk Hl. unfold mmul, mtr.
  rewrite (rsum_ext d _ (fun s => rsum d (fun r => U k r * Am r s * U l s))) by (intros; apply rsum_mulr).
  rewrite (rsum_ext d (fun s => rsum d (fun r => U l r * Am r s) * U k s)
             (fun s => rsum d (fun r => U l r * Am r s * U k s))) by (intros; apply rsum_mulr).
  rewrite (rsum_swap d d (fun s r => U l r * Am r s * U k s)).
  apply rsum_ext. intros s Hs. apply rsum_ext. intros r Hr. rewrite (HA r s Hr Hs). ring.
Qed.

Lemma congruence_hypotheses : forall d (G Gh U Am : nat -> nat -> R) alpha beta e,
  (1 <= d)%nat -> symm d G -> symm d Am ->
  opbound d d (fun k l => mmul d (mtr U) U k l - idm k l) alpha -> alpha < 1 ->
  opbound d d (fun k l => Gh k l - G k l) beta ->
  opbound d d (fun k l => Gh k l - mmul d (mmul d U Am) (mtr U) k l) e ->
  (1 - alpha <= eig d (mmul d (mtr U) U) (d - 1)%nat /\
   eig d (mmul d (mtr U) U) (d - 1)%nat <= eig d (mmul d (mtr U) U) O /\
   eig d (mmul d (mtr U) U) O <= 1 + alpha) /\
  (forall k, (k < d)%nat -> exists th,
     eig d (mmul d (mtr U) U) (d - 1)%nat <= th <= eig d (mmul d (mtr U) U) O /\
     eig d (mmul d (mmul d U Am) (mtr U)) k = th * eig d Am k) /\
  (forall k, (k < d)%nat -> Rabs (eig d G k - eig d (mmul d (mmul d U Am) (mtr U)) k) <= e + beta).
Proof.
  intros d G Gh U Am alpha beta e Hd1 HsG HsA HU Hal HB HE.
  set (UU := mmul d (mtr U) U).
  assert (HsUU : symm d UU) by (intros k l _ _; unfold UU, mmul, mtr; apply rsum_ext; intros; ring).
  assert (Hsid : symm d idm).
  { intros p q _ _. unfold idm. destruct (Nat.eq_dec p q), (Nat.eq_dec q p); subst; try reflexivity; lia. }
  assert (HwU : forall k, (k < d)%nat -> Rabs (eig d UU k - 1) <= alpha).
  { intros k Hk. rewrite <- (eig_idm d k Hk). apply weyl; assumption. }
  assert (Hext : 1 - alpha <= eig d UU (d - 1)%nat /\ eig d UU (d - 1)%nat <= eig d UU O /\ eig d UU O <= 1 + alpha).
  { pose proof (HwU (d - 1)%nat ltac:(lia)) as H1. pose proof (HwU O ltac:(lia)) as H2.
    apply Rabs_le_inv in H1. apply Rabs_le_inv in H2.
    pose proof (eig_sorted d UU O (d - 1)%nat HsUU ltac:(lia)). lra. }
  split; [exact Hext|]. split.
  - intros k Hk. apply ostrowski; [exact HsA | fold UU; lra | exact Hk].
  - intros k Hk. apply weyl; [exact HsG | apply congruence_symm, HsA | | exact Hk].
    apply (opbound_ext d d (fun p q => (Gh p q - mmul d (mmul d U Am) (mtr U) p q) + (-1) * (Gh p q - G p q)));
      [intros; ring|].
    apply opbound_add; [exact HE|].
    assert (Hb0 : 0 <= beta) by (destruct HB; assumption).
    replace beta with (Rabs (-1) * beta) by (rewrite Rabs_left by lra; ring). apply opbound_scal, HB.
Qed.

(** Theorem G with Lemma G.4's float ends ([gram.theorem_g_float_bounds],
    [_theorem_g_scalars], [_outward_squares], [_outward_sqrt]): for any
    [W] ([k x n]), [G_hat], [U] ([k x k]) and [lambda] ([eigh]'s values;
    [lv] sorted descending), [sigma_i(W) = sqrt(lambda_i(W W^T))], [i < k]. *)
Theorem theorem_g_matrix : forall k n (W Gh U : nat -> nat -> R) (lam lv : nat -> R) alpha beta e c grow shrink i,
  (1 <= k)%nat -> (i < k)%nat ->
  Permutation (map lam (seq 0 k)) (map lv (seq 0 k)) -> (forall p q, (p <= q < k)%nat -> lv q <= lv p) ->
  opbound k k (fun p q => mmul k (mtr U) U p q - idm p q) alpha -> alpha < 1 ->
  opbound k k (fun p q => Gh p q - mmul n W (mtr W) p q) beta ->
  opbound k k (fun p q => Gh p q - mmul k (mmul k U (diagm lam)) (mtr U) p q) e ->
  beta + e <= c -> 1 + alpha <= grow -> 0 <= shrink <= 1 - alpha ->
  g_lower_end lv c grow shrink i <= sqrt (eig k (mmul n W (mtr W)) i) <= g_upper_end lv c grow shrink i.
Proof.
  intros k n W Gh U lam lv alpha beta e c grow shrink i Hk1 Hi Hperm Hsort HU Hal HB HE Hc Hg Hs.
  assert (Hdiag : symm k (diagm lam)).
  { intros p q _ _. unfold diagm. destruct (Nat.eq_dec p q), (Nat.eq_dec q p); subst; try reflexivity; lia. }
  destruct (congruence_hypotheses k (mmul n W (mtr W)) Gh U (diagm lam) alpha beta e Hk1 (gram_symm k n W)
              Hdiag HU Hal HB HE) as (Hext & Host & Hadd).
  set (sW := fun p => if lt_dec p k then sqrt (eig k (mmul n W (mtr W)) p) else 0).
  set (lG := fun p => if lt_dec p k then eig k (mmul n W (mtr W)) p else 0).
  set (lH := fun p => if lt_dec p k then eig k (mmul k (mmul k U (diagm lam)) (mtr U)) p else 0).
  set (lv' := fun p => if lt_dec p k then lv p else 0).
  assert (Hb0 : 0 <= beta) by (destruct HB; assumption). assert (He0 : 0 <= e) by (destruct HE; assumption).
  assert (HsW : forall p, 0 <= sW p) by (intros p; unfold sW; destruct (lt_dec p k); [apply sqrt_pos | lra]).
  assert (HlG : forall p, lG p = sW p ^ 2).
  { intros p. unfold lG, sW. destruct (lt_dec p k) as [Hp|Hp]; [|simpl; ring].
    rewrite pow2_sqrt; [reflexivity|]. apply (gram_psd k n W p Hp). }
  assert (Hos : forall p,
    (0 <= lv' p -> eig k (mmul k (mtr U) U) (k - 1)%nat * lv' p <= lH p <= eig k (mmul k (mtr U) U) O * lv' p) /\
    (lv' p < 0 -> eig k (mmul k (mtr U) U) O * lv' p <= lH p <= eig k (mmul k (mtr U) U) (k - 1)%nat * lv' p)).
  { intros p. unfold lv', lH. destruct (lt_dec p k) as [Hp|Hp]; [|split; intros; lra].
    destruct (Host p Hp) as (th & Hth & Eth). rewrite Eth, (eig_diag k lam lv Hperm Hsort p Hp).
    split; intros; split; nra. }
  assert (Had : forall p, Rabs (lG p - lH p) <= e + beta).
  { intros p. unfold lG, lH. destruct (lt_dec p k) as [Hp|Hp]; [apply Hadd, Hp | rewrite Rminus_0_r, Rabs_R0; lra]. }
  pose proof (theorem_g_float sW lG lH lv' _ _ alpha beta e HsW HlG Hext Hos Had alpha beta e
                ltac:(lra) ltac:(lra) ltac:(lra) c grow shrink Hc Hg Hs i) as Hf.
  destruct (g_ends_ext lv' lv c grow shrink i) as [E1 E2]; [unfold lv'; destruct (lt_dec i k); [reflexivity | lia]|].
  rewrite E1, E2 in Hf. unfold sW in Hf. destruct (lt_dec i k); [exact Hf | lia].
Qed.

(** Theorem G-T with its float ends ([gram.tridiagonal_theorem_g_float_bounds]):
    [Q] ([k x k]) any float matrix, [T] any symmetric matrix (the float
    tridiagonal) whose eigenvalues are bracketed by [la i <= lambda_i(T) <= lb i]
    (Lemma S, [SturmFloat.v]). *)
Theorem theorem_gt_matrix : forall k n (W Gh Q T : nat -> nat -> R) (la lb : nat -> R) alpha beta e c grow shrink i,
  (1 <= k)%nat -> (i < k)%nat -> symm k T ->
  (forall p, (p < k)%nat -> la p <= eig k T p <= lb p) ->
  opbound k k (fun p q => mmul k (mtr Q) Q p q - idm p q) alpha -> alpha < 1 ->
  opbound k k (fun p q => Gh p q - mmul n W (mtr W) p q) beta ->
  opbound k k (fun p q => Gh p q - mmul k (mmul k Q T) (mtr Q) p q) e ->
  beta + e <= c -> 1 + alpha <= grow -> 0 <= shrink <= 1 - alpha ->
  g_lower_end la c grow shrink i <= sqrt (eig k (mmul n W (mtr W)) i) <= g_upper_end lb c grow shrink i.
Proof.
  intros k n W Gh Q T la lb alpha beta e c grow shrink i Hk1 Hi HsT Hbr HU Hal HB HE Hc Hg Hs.
  destruct (congruence_hypotheses k (mmul n W (mtr W)) Gh Q T alpha beta e Hk1 (gram_symm k n W)
              HsT HU Hal HB HE) as (Hext & Host & Hadd).
  set (sW := fun p => if lt_dec p k then sqrt (eig k (mmul n W (mtr W)) p) else 0).
  set (lG := fun p => if lt_dec p k then eig k (mmul n W (mtr W)) p else 0).
  set (lH := fun p => if lt_dec p k then eig k (mmul k (mmul k Q T) (mtr Q)) p else 0).
  set (lT := fun p => if lt_dec p k then eig k T p else 0).
  set (la' := fun p => if lt_dec p k then la p else 0).
  set (lb' := fun p => if lt_dec p k then lb p else 0).
  assert (Hb0 : 0 <= beta) by (destruct HB; assumption). assert (He0 : 0 <= e) by (destruct HE; assumption).
  assert (HsW : forall p, 0 <= sW p) by (intros p; unfold sW; destruct (lt_dec p k); [apply sqrt_pos | lra]).
  assert (HlG : forall p, lG p = sW p ^ 2).
  { intros p. unfold lG, sW. destruct (lt_dec p k) as [Hp|Hp]; [|simpl; ring].
    rewrite pow2_sqrt; [reflexivity|]. apply (gram_psd k n W p Hp). }
  assert (Hos : forall p, exists th, eig k (mmul k (mtr Q) Q) (k - 1)%nat <= th <= eig k (mmul k (mtr Q) Q) O /\
                                     lH p = th * lT p).
  { intros p. unfold lH, lT. destruct (lt_dec p k) as [Hp|Hp]; [apply Host, Hp|].
    exists (eig k (mmul k (mtr Q) Q) O). split; [lra | ring]. }
  assert (Hbr' : forall p, la' p <= lT p <= lb' p).
  { intros p. unfold la', lb', lT. destruct (lt_dec p k) as [Hp|Hp]; [apply Hbr, Hp | lra]. }
  assert (Had : forall p, Rabs (lG p - lH p) <= e + beta).
  { intros p. unfold lG, lH. destruct (lt_dec p k) as [Hp|Hp]; [apply Hadd, Hp | rewrite Rminus_0_r, Rabs_R0; lra]. }
  pose proof (theorem_gt_float sW lG lH lT la' lb' _ _ alpha beta e HsW HlG Hext Hos Hbr' Had alpha beta e
                ltac:(lra) ltac:(lra) ltac:(lra) c grow shrink Hc Hg Hs i) as Hf.
  destruct (g_ends_ext la' la c grow shrink i) as [E1 _]; [unfold la'; destruct (lt_dec i k); [reflexivity | lia]|].
  destruct (g_ends_ext lb' lb c grow shrink i) as [_ E2]; [unfold lb'; destruct (lt_dec i k); [reflexivity | lia]|].
  rewrite E1, E2 in Hf. unfold sW in Hf. destruct (lt_dec i k); [exact Hf | lia].
Qed.

(** ** The whole of [_certify_stack_theorem_g] for one slice: the code's
    floats, computed as in [_grams_and_abs_gram_norms], [_congruence_core],
    [_abs_congruence_norm_upper] and [_certify_stack_theorem_g], give
    [lo_i <= sigma_i(A B^T) <= hi_i] ([lo], [hi] from [_outward_squares],
    [_outward_sqrt]: [TheoremGFloat.g_lower_end], [g_upper_end]).  Besides
    the spectral hypotheses of this section, the remaining premises are the
    bounds of other lemmas, machine-checked elsewhere: [alU] (Lemma 3.1,
    [_stacked.gram_deviation_upper]), [e] and [eRR] (Lemma 3.2,
    [_stacked.residual_norm_upper]), [nL] (Lemma 2.3, [_stacked.norm2_upper]),
    and the Arb constants [gum >= gamma_m], [gun >= gamma_n],
    [gu2 >= gamma_(2d)], [undA >= 2 m d eta], [undB >= 2 n d eta],
    [cu >= 2 d eta sqrt(d d)] (F6).  Every product is ANY classical
    evaluation ([dtree]), every numpy [sum] ANY tree ([stree]). *)
Theorem certify_stack_theorem_g_sound : forall m n d (A B L U Pm Mh GAh GBh : nat -> nat -> R) (lam lv : nat -> R)
    (tGA tGB tP tM : nat -> nat -> dtree) (tvA twA tv tw tz tc tr : nat -> dtree) (tsB : stree)
    nKA N n1 ninf nL alU e eRR gum gun gu2 undA undB cu i,
  (1 <= d)%nat -> (d <= m)%nat -> (d <= n)%nat -> INR m <= 2 ^ 40 -> INR n <= 2 ^ 40 -> (i < d)%nat ->
  (* the Gram matrices: [np.matmul(S^T, S)] *)
  (forall k l, (k < d)%nat -> (l < d)%nat ->
     Permutation (dpairs (tGA k l)) (map (fun r => (A r k, A r l)) (seq 0 m)) /\ GAh k l = dfl (tGA k l)) ->
  (forall k l, (k < d)%nat -> (l < d)%nat ->
     Permutation (dpairs (tGB k l)) (map (fun r => (B r k, B r l)) (seq 0 n)) /\ GBh k l = dfl (tGB k l)) ->
  (* nu_A: [_stacked.abs_gram_norm2_upper(|A|)] *)
  (forall r, (r < m)%nat -> Permutation (dpairs (tvA r)) (map (fun l => (mabs A r l, 1)) (seq 0 d))) ->
  (forall k, (k < d)%nat ->
     Permutation (dpairs (twA k)) (map (fun r => (mtr (mabs A) k r, inflate d (dfl (tvA r)))) (seq 0 m))) ->
  (forall k, (k < d)%nat -> inflate m (dfl (twA k)) <= nKA) ->
  (* nu_B from the diagonal: [_inflate(_inflate(G_ll, n).sum(), d)] *)
  Permutation (sleaves tsB) (map (fun l => inflate n (GBh l l)) (seq 0 d)) ->
  (* [_congruence_core] *)
  gamma m <= gum -> gamma n <= gun -> 2 * INR m * INR d * eta <= undA -> 2 * INR n * INR d * eta <= undB ->
  let errA := succ (fl (succ (fl (gum * nKA)) + undA)) in
  let errB := succ (fl (succ (fl (gun * inflate d (sfl tsB))) + undB)) in
  (forall k l, (k < d)%nat -> (l < d)%nat ->
     Permutation (dpairs (tP k l)) (map (fun r => (mtr L k r, GAh r l)) (seq 0 d)) /\ Pm k l = dfl (tP k l)) ->
  (forall k l, (k < d)%nat -> (l < d)%nat ->
     Permutation (dpairs (tM k l)) (map (fun r => (Pm k r, L r l)) (seq 0 d)) /\ Mh k l = dfl (tM k l)) ->
  opbound d d L nL -> opbound d d (mabs L) nL -> format nL ->
  (forall j, (j < d)%nat -> Permutation (dpairs (tv j)) (map (fun l => (mtr (mabs (mtr L)) j l, 1)) (seq 0 d))) ->
  (forall k, (k < d)%nat ->
     Permutation (dpairs (tw k)) (map (fun l => (kmax GAh k l, inflate d (dfl (tv l)))) (seq 0 d))) ->
  (forall k, (k < d)%nat ->
     Permutation (dpairs (tz k)) (map (fun l => (mabs (mtr L) k l, inflate d (dfl (tw l)))) (seq 0 d))) ->
  (forall k, (k < d)%nat -> inflate d (dfl (tz k)) <= N) ->
  gamma (d + d) <= gu2 -> 2 * INR d * eta * sqrt (INR d * INR d) <= cu ->
  let beta := succ (fl (succ (fl (succ (fl (gu2 * N)) + succ (fl (succ (fl (nL * nL)) * errA))))
                        + succ (fl (cu * succ (fl (1 + fl (2 * nL))))))) in
  opbound d d (fun k l => GBh k l - mmul d L (mtr L) k l) eRR ->
  (forall j, (j < d)%nat -> Permutation (dpairs (tc j)) (map (fun k => (mtr (mabs GAh) j k, 1)) (seq 0 d))) ->
  (forall k, (k < d)%nat -> Permutation (dpairs (tr k)) (map (fun j => (mabs GAh k j, 1)) (seq 0 d))) ->
  (forall j, (j < d)%nat -> inflate d (dfl (tc j)) <= n1) ->
  (forall k, (k < d)%nat -> inflate d (dfl (tr k)) <= ninf) ->
  let nGA := succ (fl (succ (fl (sqrt n1)) * succ (fl (sqrt ninf)))) in
  let eps := succ (fl (succ (fl (nGA + errA)) * succ (fl (errB + eRR)))) in
  (* [eigh] of [M_hat]: any [U], [lam]; [lv] = [lam] sorted descending *)
  opbound d d (fun k l => mmul d (mtr U) U k l - idm k l) alU -> alU < 1 ->
  opbound d d (fun k l => Mh k l - mmul d (mmul d U (diagm lam)) (mtr U) k l) e ->
  Permutation (map lam (seq 0 d)) (map lv (seq 0 d)) -> (forall k l, (k <= l < d)%nat -> lv l <= lv k) ->
  let c := succ (fl (succ (fl (beta + e)) + eps)) in
  let grow := succ (fl (1 + alU)) in
  let shrink := Rmax (pred (fl (1 - alU))) 0 in
  g_lower_end lv c grow shrink i <= sqrt (eig n (mmul m (mtr (mmul d A (mtr B))) (mmul d A (mtr B))) i)
    <= g_upper_end lv c grow shrink i.
Proof.
  intros m n d A B L U Pm Mh GAh GBh lam lv tGA tGB tP tM tvA twA tv tw tz tc tr tsB
    nKA N n1 ninf nL alU e eRR gum gun gu2 undA undB cu i
    Hd1 Hdm Hdn Hm Hn Hi HGA HGB HvA HwA HnKA HsB Hgum Hgun HundA HundB errA errB
    HP HM HL HaL HnLf Hv Hw Hz HN Hgu2 Hcu beta HeRR Htc Htr Hn1 Hninf nGA eps HU HalU He Hperm Hsort
    c grow shrink.
  pose proof u_pos. pose proof eta_pos.
  assert (Hm1 : (1 <= m)%nat) by lia. assert (Hn1' : (1 <= n)%nat) by lia.
  assert (HdR : INR d <= 2 ^ 40) by (apply Rle_trans with (INR m); [apply le_INR; exact Hdm | exact Hm]).
  pose proof (small_k m Hm) as Hmu. pose proof (small_k n Hn) as Hnu.
  assert (Hddu : INR (d + d) * u <= / 2).
  { rewrite plus_INR. pose proof (small_k d HdR). lra. }
  (* nu_A, nu_B *)
  assert (HnuA : opbound d d (mmul m (mtr (mabs A)) (mabs A)) nKA)
    by (apply (abs_gram_norm2_upper_float m d A tvA twA nKA); assumption).
  assert (HnuB : opbound d d (mmul n (mtr (mabs B)) (mabs B)) (inflate d (sfl tsB))).
  { apply (gram_diag_nu_upper n d B (fun l => tGB l l) tsB); try assumption; [| |reflexivity].
    - intros l Hl. apply (HGB l l Hl Hl).
    - erewrite map_ext_in; [exact HsB|]. intros l Hl. apply in_seq0 in Hl.
      destruct (HGB l l Hl Hl) as [_ E]. rewrite E. reflexivity. }
  (* the Gram errors *)
  assert (HeA : opbound d d (fun k l => mmul m (mtr A) A k l - GAh k l) errA).
  { apply (gram_error_upper m d A GAh tGA); try assumption; try lra.
    assert (0 <= INR m * INR d * eta) by (apply Rmult_le_pos; [apply Rmult_le_pos; apply pos_INR | lra]). lra. }
  assert (HeB : opbound d d (fun k l => mmul n (mtr B) B k l - GBh k l) errB).
  { apply (gram_error_upper n d B GBh tGB); try assumption; try lra.
    assert (0 <= INR n * INR d * eta) by (apply Rmult_le_pos; [apply Rmult_le_pos; apply pos_INR | lra]). lra. }
  (* N *)
  assert (HNb : opbound d d (mmul d (mmul d (mabs (mtr L)) (mabs GAh)) (mtr (mabs (mtr L)))) N)
    by (apply (abs_congruence_norm_upper_float d (mtr L) GAh tv tw tz N); assumption).
  (* beta *)
  assert (Hbeta : opbound d d (fun k l => Mh k l - mmul d (mmul d (mtr L) (mmul m (mtr A) A)) L k l) beta).
  { apply (lemma_11_2_beta_float d (mtr L) GAh (mmul m (mtr A) A) Pm Mh tP tM errA nL N gu2 cu); try assumption.
    - apply opbound_transpose, HL.
    - apply (opbound_ext d d (mtr (mabs L))); [intros; reflexivity|]. apply opbound_transpose, HaL. }
  (* eps *)
  destruct (lemma_11_2_eps_float d (mmul m (mtr A) A) GAh (mmul n (mtr B) B) GBh (mmul d L (mtr L)) tc tr
              n1 ninf errA errB eRR Hd1 HdR) as (Ha & Hb & Hab); try assumption.
  (* the scalars and Lemma 11.2 *)
  destruct (lemma_11_2_scalars beta e eps alU HalU) as (Hc & Hg & Hs).
  exact (lemma_11_2_matrix m n d A B L Mh U lam lv alU beta e _ _ eps c grow shrink i Hd1 Hdm Hdn Hi
           Hperm Hsort HU HalU Hbeta He Ha Hb Hab Hc Hg Hs).
Qed.

End Spectral.
