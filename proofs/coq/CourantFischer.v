(** * Eigenvalues by the Courant-Fischer min-max principle

    The libraries at hand (Coq 8.16's standard library, Flocq, Interval,
    Coquelicot) have no spectral theorem, so the matrix files took an
    eigenvalue function [eig] with named hypotheses (Weyl F2, Ostrowski
    Lemma G.0, ...).  Here [eig] is DEFINED by the Courant-Fischer
    principle (Horn & Johnson, Matrix Analysis, 2013, Thm 4.2.6):

      [lambda_i(M) = sup over (i+1)-dimensional subspaces span(V)
                     of inf over x in span(V), x <> 0, of x^T M x / x^T x]

    (a subspace is the column space of an [n x (i+1)] matrix [V] with
    independent columns; [i] counts from 0, largest first), and every
    hypothesis of [Lemma112.v]'s section [Spectral] is PROVED for it:
    Weyl's inequality ([cf_weyl]), sortedness, the eigenvalues of [I], of
    a Gram matrix ([>= 0]) and of a diagonal matrix (its entries sorted),
    [lambda_i(Z Z^T) = lambda_i(Z^T Z)] for [i < min(p, q)], and
    Ostrowski's theorem for a congruence [S A S^T] (Horn & Johnson,
    Thm 4.5.9).  The only linear algebra needed is that a homogeneous
    system with more unknowns than equations has a nonzero solution
    ([kernel_exists], by elimination).

    For a symmetric matrix with a spectral decomposition [M = U D U^T]
    ([U] orthogonal; one exists by the spectral theorem), the min-max
    value is the [i]-th largest entry of [D] ([cf_spectral]: Ostrowski with
    [U^T U = I] and the diagonal case), i.e. the usual eigenvalue; for a
    matrix [Z], [sqrt(lambda_i(Z^T Z))] is its [i]-th singular value.
    [cf_certify_stack_theorem_g_end_to_end] is then
    [StackedBounds.certify_stack_theorem_g_end_to_end] with no spectral
    premise left.  Sylvester's law of inertia for the LDL^T pivots of a
    symmetric tridiagonal [T - mu I] ([cf_sylvester]) discharges
    [SturmFloat.v]'s named hypotheses too ([cf_sturm_normalised_enclosure],
    [cf_sturm_counts_enclosure], [cf_lemma_s_count_enclosure]), on the same
    eigenvalue function as [cf_theorem_gt_matrix]'s bracket premise. *)

From Coq Require Import Reals Psatz List Permutation Classical_Prop Classical_Pred_Type.
From Certbound Require Import NormBounds Lemma112.
Open Scope R_scope.

(** ** Total suprema and infima *)

Definition sup_of (E : R -> Prop) : R :=
  match ClassicalDedekindReals.sig_not_dec (bound E /\ exists x, E x) with
  | left H => proj1_sig (completeness E (proj1 (NNPP _ H)) (proj2 (NNPP _ H)))
  | right _ => 0
  end.

Lemma sup_of_lub : forall E, bound E -> (exists x, E x) -> is_lub E (sup_of E).
Proof.
  intros E Hb Hn. unfold sup_of.
  destruct (ClassicalDedekindReals.sig_not_dec _) as [H|H].
  - destruct (completeness _ _ _) as [m Hm]. exact Hm.
  - exfalso. apply H. split; assumption.
Qed.

Lemma sup_ge : forall (E : R -> Prop) c x, (forall y, E y -> y <= c) -> E x -> x <= sup_of E.
Proof.
  intros E c x Hc Hx. destruct (sup_of_lub E (ex_intro _ c Hc) (ex_intro _ x Hx)) as [Hu _].
  apply Hu, Hx.
Qed.

Lemma sup_le : forall (E : R -> Prop) c, (forall y, E y -> y <= c) -> (exists x, E x) -> sup_of E <= c.
Proof.
  intros E c Hc Hn. destruct (sup_of_lub E (ex_intro _ c Hc) Hn) as [_ Hl].
  apply Hl. exact Hc.
Qed.

Lemma sup_approx : forall (E : R -> Prop) c eps, (forall y, E y -> y <= c) -> (exists x, E x) -> 0 < eps ->
  exists x, E x /\ sup_of E - eps < x.
Proof.
  intros E c eps Hc Hn He. apply NNPP. intros H.
  assert (Hub : forall y, E y -> y <= sup_of E - eps).
  { intros y Hy. destruct (Rle_or_lt y (sup_of E - eps)) as [|Hlt]; [assumption|].
    exfalso. apply H. exists y. split; assumption. }
  pose proof (sup_le E _ Hub Hn). lra.
Qed.

Definition inf_of (E : R -> Prop) : R := - sup_of (fun x => E (- x)).

Lemma inf_le : forall (E : R -> Prop) c x, (forall y, E y -> c <= y) -> E x -> inf_of E <= x.
Proof.
  intros E c x Hc Hx. unfold inf_of. enough (- x <= sup_of (fun t => E (- t))) by lra.
  apply (sup_ge _ (- c)); [intros y Hy; specialize (Hc _ Hy); lra|]. rewrite Ropp_involutive. exact Hx.
Qed.

Lemma inf_ge : forall (E : R -> Prop) c, (forall y, E y -> c <= y) -> (exists x, E x) -> c <= inf_of E.
Proof.
  intros E c Hc [x Hx]. unfold inf_of. enough (sup_of (fun t => E (- t)) <= - c) by lra.
  apply sup_le; [intros y Hy; specialize (Hc _ Hy); lra|]. exists (- x). rewrite Ropp_involutive. exact Hx.
Qed.

Lemma inf_approx : forall (E : R -> Prop) c eps, (forall y, E y -> c <= y) -> (exists x, E x) -> 0 < eps ->
  exists x, E x /\ x < inf_of E + eps.
Proof.
  intros E c eps Hc [x Hx] He. unfold inf_of.
  destruct (sup_approx (fun t => E (- t)) (- c) eps) as (t & Ht & Hlt).
  - intros y Hy. specialize (Hc _ Hy). lra.
  - exists (- x). rewrite Ropp_involutive. exact Hx.
  - exact He.
  - exists (- t). split; [exact Ht|lra].
Qed.

Lemma abs_le_inv : forall a b, Rabs a <= b -> - b <= a <= b.
Proof. intros a b H. unfold Rabs in H. destruct (Rcase_abs a); lra. Qed.

Lemma le_eps : forall a b c, 0 <= c -> (forall eps, 0 < eps -> a <= b + c * eps) -> a <= b.
Proof.
  intros a b c Hc H. apply le_epsilon. intros eps He.
  specialize (H (eps / (c + 1))). assert (0 < eps / (c + 1)) by (apply Rdiv_lt_0_compat; lra).
  specialize (H H0). assert (c * (eps / (c + 1)) <= eps).
  { unfold Rdiv. rewrite <- Rmult_assoc. apply (Rmult_le_reg_r (c + 1)); [lra|].
    rewrite Rmult_assoc, Rinv_l by lra. nra. }
  lra.
Qed.

(** ** Quadratic forms, Rayleigh quotients, the min-max value *)

Definition qform (n : nat) (M : nat -> nat -> R) (x : nat -> R) : R := rsum n (fun a => x a * mv n M x a).

(** [V] ([n x r]) has independent columns. *)
Definition indep (n r : nat) (V : nat -> nat -> R) : Prop :=
  forall y, nsq n (mv r V y) = 0 -> forall j, (j < r)%nat -> y j = 0.

Definition rq (n : nat) (M : nat -> nat -> R) (x : nat -> R) : R := qform n M x / nsq n x.

(** [inf] of the Rayleigh quotient over [span(V) \ {0}]. *)
Definition low (n r : nat) (M V : nat -> nat -> R) : R :=
  inf_of (fun t => exists y, 0 < nsq n (mv r V y) /\ t = rq n M (mv r V y)).

(** [cf_eig n M i]: the [i]-th largest eigenvalue (from 0) of the [n x n] matrix [M]. *)
Definition cf_eig (n : nat) (M : nat -> nat -> R) (i : nat) : R :=
  sup_of (fun t => exists V, indep n (S i) V /\ t = low n (S i) M V).

Lemma quad_ext : forall n M x z, (forall a, (a < n)%nat -> x a = z a) -> qform n M x = qform n M z.
Proof.
  intros n M x z H. unfold qform. apply rsum_ext. intros a Ha. rewrite H by exact Ha. f_equal.
  apply mv_ext; [reflexivity|exact H].
Qed.

Lemma rq_ext : forall n M x z, (forall a, (a < n)%nat -> x a = z a) -> rq n M x = rq n M z.
Proof. intros n M x z H. unfold rq. rewrite (quad_ext n M x z H), (nsq_ext n x z H). reflexivity. Qed.

Definition absum (n : nat) (M : nat -> nat -> R) : R := rsum n (fun a => rsum n (fun b => Rabs (M a b))).

Lemma sq_le_nsq : forall n x a, (a < n)%nat -> x a * x a <= nsq n x.
Proof.
  induction n as [|n IH]; intros x a Ha; [lia|]. unfold nsq in *. simpl rsum.
  pose proof (nsq_nonneg n x) as H0. unfold nsq in H0.
  destruct (Nat.eq_dec a n) as [->|Hne]; [lra|].
  specialize (IH x a ltac:(lia)). pose proof (Rle_0_sqr (x n)). unfold Rsqr in *. lra.
Qed.

Lemma absum_nonneg : forall n M, 0 <= absum n M.
Proof. intros. apply rsum_nonneg. intros. apply rsum_nonneg. intros. apply Rabs_pos. Qed.

Lemma quad_bound : forall n M x, Rabs (qform n M x) <= absum n M * nsq n x.
Proof.
  intros n M x. unfold qform, absum. eapply Rle_trans; [apply rsum_abs|].
  rewrite rsum_mulr. apply rsum_le. intros a Ha. rewrite Rabs_mult. unfold mv.
  eapply Rle_trans; [apply Rmult_le_compat_l; [apply Rabs_pos|apply rsum_abs]|].
  rewrite <- rsum_scal, rsum_mulr. apply rsum_le. intros b Hb. rewrite Rabs_mult.
  pose proof (sq_le_nsq n x a Ha). pose proof (sq_le_nsq n x b Hb).
  pose proof (Rabs_pos (M a b)). pose proof (Rabs_pos (x a)). pose proof (Rabs_pos (x b)).
  assert (Rabs (x a) * Rabs (x b) <= nsq n x).
  { assert (Rabs (x a) * Rabs (x a) <= nsq n x) by (rewrite <- Rabs_mult, Rabs_pos_eq by apply Rle_0_sqr; lra).
    assert (Rabs (x b) * Rabs (x b) <= nsq n x) by (rewrite <- Rabs_mult, Rabs_pos_eq by apply Rle_0_sqr; lra).
    nra. }
  replace (Rabs (x a) * (Rabs (M a b) * Rabs (x b))) with (Rabs (M a b) * (Rabs (x a) * Rabs (x b))) by ring.
  apply Rmult_le_compat_l; assumption.
Qed.

Lemma rq_bound : forall n M x, 0 < nsq n x -> - absum n M <= rq n M x <= absum n M.
Proof.
  intros n M x Hx. unfold rq. pose proof (quad_bound n M x) as H. apply abs_le_inv in H.
  split.
  - apply (Rmult_le_reg_r (nsq n x)); [exact Hx|]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. lra.
  - apply (Rmult_le_reg_r (nsq n x)); [exact Hx|]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. lra.
Qed.

Lemma nsq_zero : forall n x, nsq n x = 0 -> forall a, (a < n)%nat -> x a = 0.
Proof.
  intros n x H a Ha. pose proof (sq_le_nsq n x a Ha). rewrite H in H0.
  pose proof (Rle_0_sqr (x a)). unfold Rsqr in H1. nra.
Qed.

Lemma nsq_pos : forall n x a, (a < n)%nat -> x a <> 0 -> 0 < nsq n x.
Proof.
  intros n x a Ha Hx. destruct (nsq_nonneg n x) as [|H]; [assumption|].
  exfalso. apply Hx. apply (nsq_zero n x (eq_sym H) a Ha).
Qed.

Definition eunit (j : nat) : nat -> R := fun l => if Nat.eq_dec l j then 1 else 0.

(** An independent [V] with [r >= 1] columns has a nonzero vector in its span. *)
Lemma indep_nonempty : forall n r V, indep n (S r) V -> 0 < nsq n (mv (S r) V (eunit O)).
Proof.
  intros n r V HV. destruct (nsq_nonneg n (mv (S r) V (eunit O))) as [|H]; [assumption|].
  exfalso. specialize (HV (eunit O) (eq_sym H) O ltac:(lia)). unfold eunit in HV.
  destruct (Nat.eq_dec 0 0); [lra|lia].
Qed.

Lemma low_set_bound : forall n r M V t,
  (exists y, 0 < nsq n (mv r V y) /\ t = rq n M (mv r V y)) -> - absum n M <= t <= absum n M.
Proof. intros n r M V t (y & Hy & ->). apply rq_bound, Hy. Qed.

Lemma low_bound : forall n r M V, indep n (S r) V -> - absum n M <= low n (S r) M V <= absum n M.
Proof.
  intros n r M V HV. pose proof (indep_nonempty n r V HV) as Hp. split.
  - apply inf_ge; [intros y Hy; apply (low_set_bound n (S r) M V y Hy)|].
    eexists. exists (eunit O). split; [exact Hp|reflexivity].
  - eapply Rle_trans; [apply (inf_le _ (- absum n M)); [intros y Hy; apply (low_set_bound n (S r) M V y Hy)|]|].
    + exists (eunit O). split; [exact Hp|reflexivity].
    + apply (rq_bound n M _ Hp).
Qed.

(** [low] is below every Rayleigh quotient of the span, above any lower bound of them. *)
Lemma low_le : forall n r M V y, 0 < nsq n (mv r V y) -> low n r M V <= rq n M (mv r V y).
Proof.
  intros n r M V y Hy. apply (inf_le _ (- absum n M)); [intros t Ht; apply (low_set_bound n r M V t Ht)|].
  exists y. split; [exact Hy|reflexivity].
Qed.

Lemma low_ge : forall n r M V c, indep n (S r) V ->
  (forall y, 0 < nsq n (mv (S r) V y) -> c <= rq n M (mv (S r) V y)) -> c <= low n (S r) M V.
Proof.
  intros n r M V c HV H. apply inf_ge; [intros t (y & Hy & ->); apply H, Hy|].
  eexists. exists (eunit O). split; [apply indep_nonempty, HV|reflexivity].
Qed.

(** [V = I] restricted to its first [r <= n] columns. *)
Lemma rsum_pad : forall n k f, (k <= n)%nat -> rsum n (fun l => if lt_dec l k then f l else 0) = rsum k f.
Proof.
  induction n as [|n IH]; intros k f Hk.
  - replace k with O by lia. reflexivity.
  - simpl rsum. destruct (Nat.eq_dec k (S n)) as [->|Hne].
    + destruct (lt_dec n (S n)) as [_|]; [|lia]. simpl rsum. f_equal. rewrite (rsum_ext n _ f); [reflexivity|].
      intros l Hl. destruct (lt_dec l (S n)) as [_|]; [reflexivity|lia].
    + rewrite IH by lia. destruct (lt_dec n k); [lia|]. ring.
Qed.

Lemma mv_idm_cols : forall n r y a, (a < n)%nat -> mv r idm y a = if lt_dec a r then y a else 0.
Proof.
  intros n r y a Ha. destruct (lt_dec a r) as [Hl|Hl]; [apply mv_idm, Hl|].
  unfold mv. rewrite (rsum_ext r _ (fun _ => 0)); [apply rsum_zero|]. intros j Hj. unfold idm.
  destruct (Nat.eq_dec a j); [lia|ring].
Qed.

Lemma nsq_idm_cols : forall n r y, (r <= n)%nat -> nsq n (mv r idm y) = nsq r y.
Proof.
  intros n r y Hr. unfold nsq. rewrite <- (rsum_pad n r (fun j => y j * y j) Hr). apply rsum_ext.
  intros a Ha. rewrite (mv_idm_cols n r y a Ha). destruct (lt_dec a r); ring.
Qed.

Lemma idm_indep : forall n r, (r <= n)%nat -> indep n r idm.
Proof.
  intros n r Hr y H j Hj. rewrite nsq_idm_cols in H by exact Hr. exact (nsq_zero r y H j Hj).
Qed.

Lemma eig_set_bound : forall n M i t,
  (exists V, indep n (S i) V /\ t = low n (S i) M V) -> t <= absum n M.
Proof. intros n M i t (V & HV & ->). apply low_bound, HV. Qed.

Lemma eig_nonempty : forall n M i, (i < n)%nat -> exists t, exists V, indep n (S i) V /\ t = low n (S i) M V.
Proof. intros n M i Hi. eexists. exists idm. split; [apply idm_indep; lia|reflexivity]. Qed.

Lemma eig_ge : forall n M i V, indep n (S i) V -> low n (S i) M V <= cf_eig n M i.
Proof.
  intros n M i V HV. apply (sup_ge _ (absum n M)); [apply eig_set_bound|]. exists V. split; [exact HV|reflexivity].
Qed.

Lemma eig_le : forall n M i c, (i < n)%nat ->
  (forall V, indep n (S i) V -> low n (S i) M V <= c) -> cf_eig n M i <= c.
Proof.
  intros n M i c Hi H. apply sup_le; [intros t (V & HV & ->); apply H, HV|]. apply eig_nonempty, Hi.
Qed.

(** ** Weyl (F2) *)

Lemma quad_sub : forall n X Y x, qform n X x - qform n Y x = qform n (fun a b => X a b - Y a b) x.
Proof.
  intros. unfold qform. rewrite <- rsum_sub. apply rsum_ext. intros a _. rewrite mv_sub. ring.
Qed.

Lemma quad_opbound : forall n E c x, opbound n n E c -> Rabs (qform n E x) <= c * nsq n x.
Proof.
  intros n E c x [Hc HE]. pose proof (cauchy_schwarz n x (mv n E x)) as CS.
  fold (nsq n x) in CS. change (rsum n (fun j => mv n E x j * mv n E x j)) with (nsq n (mv n E x)) in CS.
  fold (qform n E x) in CS. pose proof (HE x). pose proof (nsq_nonneg n x).
  assert (qform n E x * qform n E x <= (c * nsq n x) * (c * nsq n x)).
  { eapply Rle_trans; [exact CS|]. replace (c * nsq n x * (c * nsq n x)) with (nsq n x * (c * c * nsq n x)) by ring.
    apply Rmult_le_compat_l; assumption. }
  rewrite <- (Rabs_pos_eq (c * nsq n x)) by (apply Rmult_le_pos; assumption).
  apply Rsqr_le_abs_0. unfold Rsqr. exact H1.
Qed.

(** Monotonicity: [x^T X x <= x^T Y x + c x^T x] for all [x] gives [lambda_i(X) <= lambda_i(Y) + c]. *)
Lemma eig_mono : forall n X Y c i, (i < n)%nat ->
  (forall x, qform n X x <= qform n Y x + c * nsq n x) -> cf_eig n X i <= cf_eig n Y i + c.
Proof.
  intros n X Y c i Hi H. apply eig_le; [exact Hi|]. intros V HV.
  enough (low n (S i) X V - c <= low n (S i) Y V) by (pose proof (eig_ge n Y i V HV); lra).
  apply low_ge; [exact HV|]. intros y Hy. pose proof (low_le n (S i) X V y Hy).
  enough (rq n X (mv (S i) V y) <= rq n Y (mv (S i) V y) + c) by lra.
  unfold rq. apply (Rmult_le_reg_r (nsq n (mv (S i) V y))); [exact Hy|].
  rewrite Rmult_plus_distr_r. unfold Rdiv. rewrite !Rmult_assoc, Rinv_l by lra. rewrite !Rmult_1_r. apply H.
Qed.

Theorem cf_weyl : forall n X Y c, opbound n n (fun i j => X i j - Y i j) c ->
  forall i, (i < n)%nat -> Rabs (cf_eig n X i - cf_eig n Y i) <= c.
Proof.
  intros n X Y c HE i Hi. apply Rabs_le. split.
  - enough (cf_eig n Y i <= cf_eig n X i + c) by lra. apply eig_mono; [exact Hi|]. intros x.
    pose proof (quad_opbound n _ c x HE) as Hq. rewrite <- quad_sub in Hq. apply abs_le_inv in Hq. lra.
  - enough (cf_eig n X i <= cf_eig n Y i + c) by lra. apply eig_mono; [exact Hi|]. intros x.
    pose proof (quad_opbound n _ c x HE) as Hq. rewrite <- quad_sub in Hq. apply abs_le_inv in Hq. lra.
Qed.

(** ** Sortedness, the identity *)

Theorem cf_sorted : forall n M i j, (i <= j < n)%nat -> cf_eig n M j <= cf_eig n M i.
Proof.
  intros n M i j Hij. apply eig_le; [lia|]. intros V HV.
  set (pad := fun (y : nat -> R) l => if lt_dec l (S i) then y l else 0).
  assert (Hpad : forall y a, mv (S j) V (pad y) a = mv (S i) V y a).
  { intros y a. unfold mv, pad. rewrite <- (rsum_pad (S j) (S i) (fun l => V a l * y l)) by lia.
    apply rsum_ext. intros l _. destruct (lt_dec l (S i)); ring. }
  assert (HVi : indep n (S i) V).
  { intros y Hy l Hl. rewrite <- (nsq_ext n (mv (S j) V (pad y))) in Hy by (intros; apply Hpad).
    specialize (HV _ Hy l ltac:(lia)). unfold pad in HV. destruct (lt_dec l (S i)); [exact HV|lia]. }
  eapply Rle_trans; [|apply (eig_ge n M i V HVi)]. apply low_ge; [exact HVi|]. intros y Hy.
  rewrite <- (nsq_ext n (mv (S j) V (pad y))) in Hy by (intros; apply Hpad).
  eapply Rle_trans; [apply (low_le n (S j) M V (pad y) Hy)|].
  right. unfold rq, qform. f_equal; [apply rsum_ext; intros a _; rewrite Hpad; f_equal; apply mv_ext;
    [reflexivity|intros; apply Hpad]|apply nsq_ext; intros; apply Hpad].
Qed.

Lemma quad_idm : forall n x, qform n idm x = nsq n x.
Proof. intros. unfold qform, nsq. apply rsum_ext. intros a Ha. rewrite mv_idm by exact Ha. reflexivity. Qed.

Theorem cf_idm : forall n i, (i < n)%nat -> cf_eig n idm i = 1.
Proof.
  intros n i Hi. apply Rle_antisym.
  - apply eig_le; [exact Hi|]. intros V HV. pose proof (indep_nonempty n i V HV) as Hp.
    eapply Rle_trans; [apply (low_le _ _ _ _ _ Hp)|]. unfold rq. rewrite quad_idm.
    right. field. lra.
  - eapply Rle_trans; [|apply (eig_ge n idm i idm (idm_indep n (S i) Hi))]. apply low_ge; [apply idm_indep; lia|].
    intros y Hy. unfold rq. rewrite quad_idm. right. field. lra.
Qed.

(** ** Gram matrices *)

Lemma quad_gram : forall p q (Z : nat -> nat -> R) x, qform p (mmul q Z (mtr Z)) x = nsq q (mv p (mtr Z) x).
Proof.
  intros p q Z x. unfold qform. rewrite (rsum_ext p _ (fun a => rsum q (fun l => x a * Z a l * mv p (mtr Z) x l))).
  2:{ intros a _. rewrite mv_mmul. unfold mv at 1. rewrite <- rsum_scal. apply rsum_ext. intros; ring. }
  rewrite rsum_swap. unfold nsq. apply rsum_ext. intros l _. rewrite <- rsum_mulr. f_equal.
  unfold mv, mtr. apply rsum_ext. intros; ring.
Qed.

Theorem cf_gram_psd : forall p q (Z : nat -> nat -> R) i, (i < p)%nat -> 0 <= cf_eig p (mmul q Z (mtr Z)) i.
Proof.
  intros p q Z i Hi. eapply Rle_trans; [|apply (eig_ge p _ i idm (idm_indep p (S i) Hi))].
  apply low_ge; [apply idm_indep; lia|]. intros y Hy. unfold rq. rewrite quad_gram.
  apply div_nonneg; [apply nsq_nonneg|exact Hy].
Qed.

Lemma gram_swap_le : forall p q (Z : nat -> nat -> R) i, (i < p)%nat -> (i < q)%nat ->
  cf_eig p (mmul q Z (mtr Z)) i <= cf_eig q (mmul p (mtr Z) Z) i.
Proof.
  intros p q Z i Hp Hq. apply eig_le; [exact Hp|]. intros V HV.
  destruct (Rle_or_lt (low p (S i) (mmul q Z (mtr Z)) V) 0) as [Hle|Hpos].
  { eapply Rle_trans; [exact Hle|]. exact (cf_gram_psd q p (mtr Z) i Hq). }
  set (W := mmul p (mtr Z) V).
  assert (HW : forall y a, mv (S i) W y a = mv p (mtr Z) (mv (S i) V y) a) by (intros; apply mv_mmul).
  (* [Z^T x = 0] for [x <> 0] in span(V) would give a zero Rayleigh quotient *)
  assert (Hnz : forall y, 0 < nsq p (mv (S i) V y) -> 0 < nsq q (mv (S i) W y)).
  { intros y Hy. destruct (nsq_nonneg q (mv (S i) W y)) as [|H0]; [assumption|]. exfalso.
    pose proof (low_le p (S i) (mmul q Z (mtr Z)) V y Hy) as Hl. unfold rq in Hl.
    rewrite quad_gram, <- (nsq_ext q _ _ (fun a _ => HW y a)), <- H0 in Hl. unfold Rdiv in Hl. rewrite Rmult_0_l in Hl. lra. }
  assert (HWi : indep q (S i) W).
  { intros y Hy j Hj. destruct (nsq_nonneg p (mv (S i) V y)) as [Hx|Hx].
    - specialize (Hnz y Hx). lra.
    - exact (HV y (eq_sym Hx) j Hj). }
  eapply Rle_trans; [|apply (eig_ge q _ i W HWi)]. apply low_ge; [exact HWi|]. intros y Hy.
  set (x := mv (S i) V y). set (w := mv p (mtr Z) x).
  assert (Hx : 0 < nsq p x).
  { destruct (nsq_nonneg p x) as [|Hx]; [assumption|]. exfalso.
    rewrite (nsq_ext q _ w) in Hy by (intros; apply HW).
    assert (nsq q w = 0); [|lra]. unfold nsq. rewrite (rsum_ext q _ (fun _ => 0)); [apply rsum_zero|].
    intros l _. unfold w, mv. rewrite (rsum_ext p _ (fun _ => 0)); [rewrite rsum_zero; ring|].
    intros a Ha. rewrite (nsq_zero p x (eq_sym Hx) a Ha). ring. }
  assert (Hw : 0 < nsq q w) by (rewrite (nsq_ext q _ w) in Hy by (intros; apply HW); exact Hy).
  eapply Rle_trans; [apply (low_le p (S i) _ V y Hx)|]. fold x.
  rewrite (rq_ext q _ _ w) by (intros; apply HW).
  unfold rq. rewrite quad_gram. fold w.
  change (mmul p (mtr Z) Z) with (mmul p (mtr Z) (mtr (mtr Z))). rewrite (quad_gram q p (mtr Z) w).
  (* [||w||^2 = <x, Z w>], Cauchy-Schwarz *)
  assert (E : nsq q w = rsum p (fun a => x a * mv q Z w a)).
  { unfold w. rewrite <- quad_gram. unfold qform. apply rsum_ext. intros a _. rewrite mv_mmul. reflexivity. }
  pose proof (cauchy_schwarz p x (mv q Z w)) as CS. rewrite <- E in CS. fold (nsq p x) in CS.
  change (rsum p (fun j => mv q Z w j * mv q Z w j)) with (nsq p (mv q Z w)) in CS.
  change (mv q (mtr (mtr Z)) w) with (mv q Z w).
  unfold Rdiv. apply (Rmult_le_reg_r (nsq p x)); [exact Hx|]. rewrite Rmult_assoc, Rinv_l by lra.
  apply (Rmult_le_reg_r (nsq q w)); [exact Hw|].
  replace (nsq p (mv q Z w) * / nsq q w * nsq p x * nsq q w) with (nsq p (mv q Z w) * nsq p x)
    by (field; lra).
  nra.
Qed.

Theorem cf_gram_swap : forall p q (Z : nat -> nat -> R) i, (i < p)%nat -> (i < q)%nat ->
  cf_eig p (mmul q Z (mtr Z)) i = cf_eig q (mmul p (mtr Z) Z) i.
Proof.
  intros p q Z i Hp Hq. apply Rle_antisym; [apply gram_swap_le; assumption|].
  exact (gram_swap_le q p (mtr Z) i Hq Hp).
Qed.

(** ** More unknowns than equations: a nonzero solution *)

Definition swaprow (r n a : nat) : nat := if Nat.eq_dec a r then n else a.

Lemma mv_last : forall n A (z : nat -> R) t a,
  mv (S n) A (fun l => if Nat.eq_dec l n then t else z l) a = mv n A z a + A a n * t.
Proof.
  intros n A z t a. unfold mv. simpl rsum. destruct (Nat.eq_dec n n); [|lia]. f_equal.
  apply rsum_ext. intros l Hl. destruct (Nat.eq_dec l n); [lia|reflexivity].
Qed.

Theorem kernel_exists : forall n (A : nat -> nat -> R),
  exists y, (exists j, (j <= n)%nat /\ y j <> 0) /\ forall a, (a < n)%nat -> mv (S n) A y a = 0.
Proof.
  induction n as [|n IH]; intros A.
  - exists (fun _ => 1). split; [exists O; split; [lia|lra]|]. intros; lia.
  - destruct (classic (forall a, (a < S n)%nat -> A a (S n) = 0)) as [Hz|Hnz].
    + exists (eunit (S n)). split.
      * exists (S n). split; [lia|]. unfold eunit. destruct (Nat.eq_dec (S n) (S n)); [lra|lia].
      * intros a Ha. unfold mv.
        rewrite (rsum_ext (S (S n)) _ (fun l => if Nat.eq_dec l (S n) then A a (S n) else 0)).
        -- rewrite rsum_point. destruct (lt_dec (S n) (S (S n))); [apply Hz, Ha|lia].
        -- intros l _. unfold eunit. destruct (Nat.eq_dec l (S n)) as [->|]; ring.
    + apply not_all_ex_not in Hnz. destruct Hnz as [r Hr]. apply imply_to_and in Hr. destruct Hr as [Hr Hpiv].
      destruct (IH (fun a l => A (swaprow r n a) l - A (swaprow r n a) (S n) / A r (S n) * A r l))
        as (z & (j & Hj & Hzj) & Hz).
      exists (fun l => if Nat.eq_dec l (S n) then - mv (S n) A z r / A r (S n) else z l). split.
      * exists j. split; [lia|]. destruct (Nat.eq_dec j (S n)); [lia|exact Hzj].
      * intros a Ha. rewrite mv_last.
        destruct (Nat.eq_dec a r) as [->|Har]; [field; exact Hpiv|].
        assert (Ea : exists a', (a' < n)%nat /\ swaprow r n a' = a).
        { destruct (Nat.eq_dec a n) as [->|Han].
          - exists r. split; [lia|]. unfold swaprow. destruct (Nat.eq_dec r r); [reflexivity|lia].
          - exists a. split; [lia|]. unfold swaprow. destruct (Nat.eq_dec a r); [lia|reflexivity]. }
        destruct Ea as (a' & Ha' & Ea). specialize (Hz a' Ha').
        assert (E : mv (S n) A z a = A a (S n) / A r (S n) * mv (S n) A z r).
        { unfold mv in Hz |- *. rewrite Ea in Hz. rewrite <- rsum_scal.
          rewrite (rsum_ext (S n) _ (fun l => A a l * z l - A a (S n) / A r (S n) * (A r l * z l))) in Hz
            by (intros; ring).
          rewrite rsum_sub in Hz. lra. }
        rewrite E. field. exact Hpiv.
Qed.

Lemma kernel_exists_le : forall m c (A : nat -> nat -> R), (m < c)%nat ->
  exists y, (exists j, (j < c)%nat /\ y j <> 0) /\ forall a, (a < m)%nat -> mv c A y a = 0.
Proof.
  intros m c A Hmc. destruct (kernel_exists m A) as (y & (j & Hj & Hy) & H).
  exists (fun l => if lt_dec l (S m) then y l else 0). split.
  - exists j. split; [lia|]. destruct (lt_dec j (S m)); [exact Hy|lia].
  - intros a Ha. transitivity (mv (S m) A y a); [|apply H, Ha]. unfold mv. rewrite <- (rsum_pad c (S m)) by lia.
    apply rsum_ext. intros l _. destruct (lt_dec l (S m)); ring.
Qed.

Lemma nsq_of_zero : forall n x, (forall a, (a < n)%nat -> x a = 0) -> nsq n x = 0.
Proof.
  intros n x H. unfold nsq. rewrite (rsum_ext n _ (fun _ => 0)); [apply rsum_zero|].
  intros a Ha. rewrite H by exact Ha. ring.
Qed.

Lemma mv_of_zero : forall m n M x, nsq n x = 0 -> nsq m (mv n M x) = 0.
Proof.
  intros m n M x H. apply nsq_of_zero. intros a _. unfold mv.
  rewrite (rsum_ext n _ (fun _ => 0)); [apply rsum_zero|]. intros l Hl. rewrite (nsq_zero n x H l Hl). ring.
Qed.

Lemma mv_scal : forall n M y c a, mv n M (fun l => c * y l) a = c * mv n M y a.
Proof. intros. unfold mv. rewrite <- rsum_scal. apply rsum_ext. intros; ring. Qed.

(** [n] independent vectors of [R^n] span it. *)
Theorem indep_span : forall n V, indep n n V -> forall x, exists y, forall a, (a < n)%nat -> mv n V y a = x a.
Proof.
  intros n V HV x.
  destruct (kernel_exists n (fun a l => if Nat.eq_dec l n then x a else V a l)) as (y & (j & Hj & Hyj) & Hk).
  assert (Hs : forall a, (a < n)%nat -> mv n V y a + x a * y n = 0).
  { intros a Ha. transitivity (mv (S n) (fun a l => if Nat.eq_dec l n then x a else V a l) y a); [|apply Hk, Ha].
    unfold mv. simpl rsum. destruct (Nat.eq_dec n n); [|lia].
    rewrite Rmult_comm. f_equal. apply rsum_ext. intros l Hl. destruct (Nat.eq_dec l n); [lia|reflexivity]. }
  destruct (Req_dec (y n) 0) as [Hn|Hn].
  - exfalso. assert (H0 : nsq n (mv n V y) = 0).
    { apply nsq_of_zero. intros a Ha. specialize (Hs a Ha). rewrite Hn in Hs. lra. }
    destruct (Nat.eq_dec j n) as [->|Hjn]; [exact (Hyj Hn)|].
    exact (Hyj (HV y H0 j ltac:(lia))).
  - exists (fun l => (- / y n) * y l). intros a Ha. rewrite mv_scal.
    specialize (Hs a Ha). replace (mv n V y a) with (- (x a * y n)) by lra.
    field. exact Hn.
Qed.

(** Choice for finitely many columns. *)
Lemma finite_choice : forall r (P : nat -> (nat -> R) -> Prop),
  (forall j, (j < r)%nat -> exists v, P j v) -> exists V : nat -> nat -> R, forall j, (j < r)%nat -> P j (fun a => V a j).
Proof.
  induction r as [|r IH]; intros P H.
  - exists (fun _ _ => 0). intros; lia.
  - destruct (IH P) as [V HV]; [intros; apply H; lia|]. destruct (H r ltac:(lia)) as [v Hv].
    exists (fun a j => if Nat.eq_dec j r then v a else V a j). intros j Hj.
    destruct (Nat.eq_dec j r) as [->|Hne]; [exact Hv|apply HV; lia].
Qed.

(** ** The extreme eigenvalues bound every Rayleigh quotient *)

Lemma nsq_scal : forall n c x, nsq n (fun a => c * x a) = c * c * nsq n x.
Proof. intros. unfold nsq. rewrite <- rsum_scal. apply rsum_ext. intros; ring. Qed.

Lemma quad_scal : forall n M c x, qform n M (fun a => c * x a) = c * c * qform n M x.
Proof.
  intros. unfold qform. rewrite <- rsum_scal. apply rsum_ext. intros a _. rewrite mv_scal. ring.
Qed.

Lemma mv_one : forall (x y : nat -> R) a, mv 1 (fun (b _ : nat) => x b) y a = y O * x a.
Proof. intros. unfold mv. simpl. ring. Qed.

Theorem rq_le_eig0 : forall n M x, 0 < nsq n x -> rq n M x <= cf_eig n M 0.
Proof.
  intros n M x Hx. set (V := fun (b j : nat) => x b).
  assert (HV : indep n 1 V).
  { intros y Hy j Hj. replace j with O by lia.
    rewrite (nsq_ext n _ (fun a => y O * x a)) in Hy by (intros; apply mv_one). rewrite nsq_scal in Hy.
    assert (y O * y O = 0) by (apply (Rmult_eq_reg_r (nsq n x)); lra). nra. }
  eapply Rle_trans; [|apply (eig_ge n M 0 V HV)]. apply low_ge; [exact HV|]. intros y Hy.
  rewrite (rq_ext n M (mv 1 V y) (fun a => y O * x a)) by (intros; apply mv_one).
  rewrite (nsq_ext n _ (fun a => y O * x a)) in Hy by (intros; apply mv_one). rewrite nsq_scal in Hy.
  unfold rq. rewrite quad_scal, nsq_scal. right. field. split; [lra|]. intros H0. rewrite H0 in Hy. lra.
Qed.

Theorem eig_last_le_rq : forall n M x, (1 <= n)%nat -> 0 < nsq n x -> cf_eig n M (n - 1) <= rq n M x.
Proof.
  intros n M x Hn Hx. apply eig_le; [lia|]. replace (S (n - 1)) with n by lia. intros V HV.
  destruct (indep_span n V HV x) as [y Hy].
  assert (Hp : 0 < nsq n (mv n V y)) by (rewrite (nsq_ext n _ _ Hy); exact Hx).
  rewrite <- (rq_ext n M _ _ Hy). apply low_le, Hp.
Qed.

(** ** Ostrowski (Lemma G.0): [lambda_i(S A S^T) = theta_i lambda_i(A)], [theta_i] between the extreme eigenvalues of [S^T S] *)

Lemma quad_congruence : forall k (S Am : nat -> nat -> R) x,
  qform k (mmul k (mmul k S Am) (mtr S)) x = qform k Am (mv k (mtr S) x).
Proof.
  intros k S Am x. unfold qform.
  rewrite (rsum_ext k _ (fun a => rsum k (fun l => x a * S a l * mv k Am (mv k (mtr S) x) l))).
  2:{ intros a _. rewrite !mv_mmul. unfold mv at 1. rewrite <- rsum_scal. apply rsum_ext. intros; ring. }
  rewrite rsum_swap. apply rsum_ext. intros l _. rewrite <- rsum_mulr. f_equal.
  unfold mv, mtr. apply rsum_ext. intros; ring.
Qed.

Section Ostrowski.
Variables (k : nat) (Sg Am : nat -> nat -> R).
Let mu_lo := cf_eig k (mmul k (mtr Sg) Sg) (k - 1).
Let mu_hi := cf_eig k (mmul k (mtr Sg) Sg) O.
Hypothesis k_pos : (1 <= k)%nat.
Hypothesis mu_lo_pos : 0 < mu_lo.

Lemma mu_le : mu_lo <= mu_hi.
Proof. apply cf_sorted. lia. Qed.

(** [mu_lo ||x||^2 <= ||S^T x||^2 <= mu_hi ||x||^2]. *)
Lemma ratio_bounds : forall x, mu_lo * nsq k x <= nsq k (mv k (mtr Sg) x) <= mu_hi * nsq k x.
Proof.
  intros x. destruct (nsq_nonneg k x) as [Hx|Hx].
  - assert (E : forall j, (j < k)%nat -> cf_eig k (mmul k (mtr Sg) Sg) j = cf_eig k (mmul k Sg (mtr Sg)) j)
      by (intros j Hj; symmetry; apply cf_gram_swap; exact Hj).
    pose proof (rq_le_eig0 k (mmul k Sg (mtr Sg)) x Hx) as Hu.
    pose proof (eig_last_le_rq k (mmul k Sg (mtr Sg)) x k_pos Hx) as Hl.
    unfold rq in Hu, Hl. rewrite quad_gram in Hu, Hl. unfold mu_lo, mu_hi. rewrite !E by lia.
    split.
    + apply (Rmult_le_reg_r (/ nsq k x)); [apply Rinv_0_lt_compat, Hx|]. rewrite Rmult_assoc, Rinv_r by lra. lra.
    + apply (Rmult_le_reg_r (/ nsq k x)); [apply Rinv_0_lt_compat, Hx|]. rewrite Rmult_assoc, Rinv_r by lra. lra.
  - rewrite <- Hx, (mv_of_zero k k (mtr Sg) x (eq_sym Hx)). lra.
Qed.

Let f t := Rmax (mu_lo * t) (mu_hi * t).
Let h t := Rmin (mu_lo * t) (mu_hi * t).

Lemma fh_ratio : forall g rho, mu_lo <= rho <= mu_hi -> h g <= g * rho <= f g.
Proof.
  intros g rho Hr. unfold f, h. destruct (Rle_or_lt 0 g).
  - split; [eapply Rle_trans; [apply Rmin_l|nra]|eapply Rle_trans; [|apply Rmax_r]; nra].
  - split; [eapply Rle_trans; [apply Rmin_r|nra]|eapply Rle_trans; [|apply Rmax_l]; nra].
Qed.

Lemma f_mono : forall t t', t <= t' -> f t <= f t'.
Proof.
  intros t t' H. pose proof mu_le. unfold f. apply Rmax_lub.
  - eapply Rle_trans; [|apply Rmax_l]. nra.
  - eapply Rle_trans; [|apply Rmax_r]. nra.
Qed.

Lemma h_mono : forall t t', t <= t' -> h t <= h t'.
Proof.
  intros t t' H. pose proof mu_le. unfold h. apply Rmin_glb.
  - eapply Rle_trans; [apply Rmin_l|]. nra.
  - eapply Rle_trans; [apply Rmin_r|]. nra.
Qed.

Lemma f_shift : forall t e, 0 <= e -> f (t + e) <= f t + mu_hi * e.
Proof.
  intros t e He. pose proof mu_le. unfold f. apply Rmax_lub.
  - pose proof (Rmax_l (mu_lo * t) (mu_hi * t)). nra.
  - pose proof (Rmax_r (mu_lo * t) (mu_hi * t)). nra.
Qed.

Lemma h_shift : forall t e, 0 <= e -> h t - mu_hi * e <= h (t - e).
Proof.
  intros t e He. pose proof mu_le. unfold h. apply Rmin_glb.
  - pose proof (Rmin_l (mu_lo * t) (mu_hi * t)). nra.
  - pose proof (Rmin_r (mu_lo * t) (mu_hi * t)). nra.
Qed.

Let C := mmul k (mmul k Sg Am) (mtr Sg).

Lemma nsq_St_pos : forall x, 0 < nsq k x -> 0 < nsq k (mv k (mtr Sg) x).
Proof. intros x Hx. pose proof (ratio_bounds x). nra. Qed.

Lemma nsq_St_zero : forall x, nsq k (mv k (mtr Sg) x) = 0 -> nsq k x = 0.
Proof. intros x H. pose proof (ratio_bounds x). pose proof (nsq_nonneg k x). nra. Qed.

(** The Rayleigh quotient of [C] at [x] is that of [Am] at [S^T x] times a ratio in [[mu_lo, mu_hi]]. *)
Lemma rq_congruence : forall x, 0 < nsq k x ->
  exists rho, mu_lo <= rho <= mu_hi /\ rq k C x = rq k Am (mv k (mtr Sg) x) * rho.
Proof.
  intros x Hx. pose proof (nsq_St_pos x Hx) as Hw. pose proof (ratio_bounds x) as [H1 H2].
  exists (nsq k (mv k (mtr Sg) x) / nsq k x). split.
  - split.
    + apply (Rmult_le_reg_r (nsq k x)); [exact Hx|]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. lra.
    + apply (Rmult_le_reg_r (nsq k x)); [exact Hx|]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. lra.
  - unfold rq, C. rewrite quad_congruence. field. split; lra.
Qed.

Lemma ostrowski_upper : forall i, (i < k)%nat -> cf_eig k C i <= f (cf_eig k Am i).
Proof.
  intros i Hi. apply eig_le; [exact Hi|]. intros V HV.
  set (W := mmul k (mtr Sg) V).
  assert (HW : forall y a, mv (S i) W y a = mv k (mtr Sg) (mv (S i) V y) a) by (intros; apply mv_mmul).
  assert (HWi : indep k (S i) W).
  { intros y Hy. apply HV. apply nsq_St_zero. rewrite <- Hy. symmetry. apply nsq_ext. intros; apply HW. }
  apply (le_eps _ _ mu_hi); [pose proof mu_le; lra|]. intros eps He.
  destruct (inf_approx (fun t => exists y, 0 < nsq k (mv (S i) W y) /\ t = rq k Am (mv (S i) W y))
              (- absum k Am) eps) as (t & (y & Hy & ->) & Ht).
  { intros t Ht. apply (low_set_bound k (S i) Am W t Ht). }
  { eexists. exists (eunit O). split; [apply indep_nonempty, HWi|reflexivity]. }
  { exact He. }
  fold (low k (S i) Am W) in Ht.
  assert (Hx : 0 < nsq k (mv (S i) V y)).
  { destruct (nsq_nonneg k (mv (S i) V y)) as [|H0]; [assumption|]. exfalso.
    rewrite (nsq_ext k _ (mv k (mtr Sg) (mv (S i) V y))) in Hy by (intros; apply HW).
    rewrite (mv_of_zero k k (mtr Sg) _ (eq_sym H0)) in Hy. lra. }
  destruct (rq_congruence _ Hx) as (rho & Hr & Erq).
  rewrite <- (rq_ext k Am (mv (S i) W y)) in Erq by (intros; apply HW).
  pose proof (low_le k (S i) C V y Hx) as Hl. rewrite Erq in Hl.
  pose proof (fh_ratio (rq k Am (mv (S i) W y)) rho Hr) as [_ Hf].
  pose proof (f_mono _ _ (Rlt_le _ _ Ht)) as Hm.
  pose proof (f_shift (low k (S i) Am W) eps (Rlt_le _ _ He)) as Hs.
  pose proof (f_mono _ _ (eig_ge k Am i W HWi)) as He2.
  lra.
Qed.

Lemma ostrowski_lower : forall i, (i < k)%nat -> h (cf_eig k Am i) <= cf_eig k C i.
Proof.
  intros i Hi. apply (le_eps _ _ mu_hi); [pose proof mu_le; lra|]. intros eps He.
  destruct (sup_approx (fun t => exists W, indep k (S i) W /\ t = low k (S i) Am W) (absum k Am) eps)
    as (t & (W & HWi & ->) & Ht).
  { apply eig_set_bound. }
  { apply eig_nonempty, Hi. }
  { exact He. }
  fold (cf_eig k Am i) in Ht.
  assert (HSt : indep k k (mtr Sg)) by (intros y Hy; apply nsq_zero, nsq_St_zero, Hy).
  destruct (finite_choice (S i) (fun j v => forall a, (a < k)%nat -> mv k (mtr Sg) v a = W a j)) as [V HV].
  { intros j _. apply (indep_span k (mtr Sg) HSt (fun a => W a j)). }
  assert (HW : forall y a, (a < k)%nat -> mv (S i) W y a = mv k (mtr Sg) (mv (S i) V y) a).
  { intros y a Ha. rewrite <- mv_mmul. apply mv_ext; [|reflexivity]. intros j Hj.
    rewrite <- (HV j Hj a Ha). reflexivity. }
  assert (HVi : indep k (S i) V).
  { intros y Hy. apply HWi. rewrite (nsq_ext k _ _ (fun a Ha => HW y a Ha)). apply mv_of_zero, Hy. }
  assert (Hlow : h (cf_eig k Am i) - mu_hi * eps <= low k (S i) C V).
  { apply low_ge; [exact HVi|]. intros y Hx.
    destruct (rq_congruence _ Hx) as (rho & Hr & Erq). rewrite Erq.
    rewrite <- (rq_ext k Am (mv (S i) W y)) by (intros; apply HW; assumption).
    assert (Hy : 0 < nsq k (mv (S i) W y)).
    { rewrite (nsq_ext k _ _ (fun a Ha => HW y a Ha)). apply nsq_St_pos, Hx. }
    pose proof (fh_ratio (rq k Am (mv (S i) W y)) rho Hr) as [Hh _].
    pose proof (h_mono _ _ (low_le k (S i) Am W y Hy)) as Hm.
    pose proof (h_mono _ _ (Rlt_le _ _ Ht)) as Hm2.
    pose proof (h_shift (cf_eig k Am i) eps (Rlt_le _ _ He)) as Hs.
    lra. }
  pose proof (eig_ge k C i V HVi). lra.
Qed.

Theorem ostrowski_cf : forall i, (i < k)%nat ->
  exists th, mu_lo <= th <= mu_hi /\ cf_eig k C i = th * cf_eig k Am i.
Proof.
  intros i Hi. pose proof (ostrowski_upper i Hi) as Hu. pose proof (ostrowski_lower i Hi) as Hl.
  pose proof mu_le as Hle. unfold f, h in *. set (lam := cf_eig k Am i) in *. set (lam' := cf_eig k C i) in *.
  destruct (Rtotal_order lam 0) as [Hn|[H0|Hp]].
  - rewrite Rmax_left in Hu by nra. rewrite Rmin_right in Hl by nra.
    exists (lam' / lam). split; [split|field; lra].
    + apply (Rmult_le_reg_r (- lam)); [lra|]. replace (lam' / lam * - lam) with (- lam') by (field; lra). lra.
    + apply (Rmult_le_reg_r (- lam)); [lra|]. replace (lam' / lam * - lam) with (- lam') by (field; lra). lra.
  - rewrite H0 in Hu, Hl. rewrite Rmult_0_r, Rmax_left in Hu by lra. rewrite Rmult_0_r, Rmin_left in Hl by lra.
    exists mu_lo. split; [lra|]. rewrite H0. lra.
  - rewrite Rmax_right in Hu by nra. rewrite Rmin_left in Hl by nra.
    exists (lam' / lam). split; [split|field; lra].
    + apply (Rmult_le_reg_r lam); [lra|]. replace (lam' / lam * lam) with lam' by (field; lra). lra.
    + apply (Rmult_le_reg_r lam); [lra|]. replace (lam' / lam * lam) with lam' by (field; lra). lra.
Qed.

End Ostrowski.

Theorem cf_ostrowski : forall k (S Am : nat -> nat -> R) i, symm k Am ->
  0 < cf_eig k (mmul k (mtr S) S) (k - 1)%nat -> (i < k)%nat ->
  exists th, cf_eig k (mmul k (mtr S) S) (k - 1)%nat <= th <= cf_eig k (mmul k (mtr S) S) O /\
             cf_eig k (mmul k (mmul k S Am) (mtr S)) i = th * cf_eig k Am i.
Proof. intros k S Am i _ Hpos Hi. apply ostrowski_cf; [lia|exact Hpos|exact Hi]. Qed.

(** ** A diagonal matrix: its entries, sorted *)

Lemma mv_diag : forall k lam x a, (a < k)%nat -> mv k (diagm lam) x a = lam a * x a.
Proof.
  intros k lam x a Ha. unfold mv, diagm.
  rewrite (rsum_ext k _ (fun b => if Nat.eq_dec b a then lam a * x a else 0)).
  - rewrite rsum_point. destruct (lt_dec a k); [reflexivity|lia].
  - intros b _. destruct (Nat.eq_dec a b) as [E|E], (Nat.eq_dec b a) as [E2|E2]; try lia; [subst b; ring|ring].
Qed.

Lemma quad_diag : forall k lam x, qform k (diagm lam) x = rsum k (fun a => lam a * (x a * x a)).
Proof. intros. unfold qform. apply rsum_ext. intros a Ha. rewrite mv_diag by exact Ha. ring. Qed.

Lemma in_filter_seq : forall (f : nat -> bool) k a, In a (filter f (seq 0 k)) -> (a < k)%nat /\ f a = true.
Proof. intros f k a H. apply filter_In in H. destruct H as [H1 H2]. apply in_seq in H1. split; [lia|exact H2]. Qed.

Lemma diag_upper : forall k lam i c, (i < k)%nat ->
  (length (filter (fun a => if Rlt_dec c (lam a) then true else false) (seq 0 k)) <= i)%nat ->
  cf_eig k (diagm lam) i <= c.
Proof.
  intros k lam i c Hi Hlen. apply eig_le; [exact Hi|]. intros V HV.
  set (L := filter (fun a => if Rlt_dec c (lam a) then true else false) (seq 0 k)) in *.
  destruct (kernel_exists_le (length L) (S i) (fun t l => V (nth t L O) l) ltac:(lia)) as (y & (j & Hj & Hyj) & Hk).
  assert (Hx : 0 < nsq k (mv (S i) V y)).
  { destruct (nsq_nonneg k (mv (S i) V y)) as [|H0]; [assumption|]. exfalso. exact (Hyj (HV y (eq_sym H0) j Hj)). }
  eapply Rle_trans; [apply (low_le k (S i) _ V y Hx)|]. unfold rq. rewrite quad_diag.
  apply (Rmult_le_reg_r (nsq k (mv (S i) V y))); [exact Hx|]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra.
  rewrite Rmult_1_r. unfold nsq. rewrite <- rsum_scal. apply rsum_le. intros a Ha.
  destruct (Rlt_dec c (lam a)) as [Hgt|Hle].
  - assert (Hin : In a L) by (apply filter_In; split; [apply in_seq; lia|destruct (Rlt_dec c (lam a)); [reflexivity|lra]]).
    destruct (In_nth L a O Hin) as (t & Ht & Et).
    specialize (Hk t Ht). unfold mv in Hk. rewrite Et in Hk. fold (mv (S i) V y a) in Hk. rewrite Hk. lra.
  - pose proof (Rle_0_sqr (mv (S i) V y a)). unfold Rsqr in *. nra.
Qed.

Lemma diag_lower : forall k lam i c,
  (S i <= length (filter (fun a => if Rle_dec c (lam a) then true else false) (seq 0 k)))%nat ->
  c <= cf_eig k (diagm lam) i.
Proof.
  intros k lam i c Hlen.
  set (L := filter (fun a => if Rle_dec c (lam a) then true else false) (seq 0 k)) in *.
  assert (HL : NoDup L) by (apply NoDup_filter, seq_NoDup).
  set (V := fun a j => if Nat.eq_dec a (nth j L O) then 1 else 0).
  assert (HLk : forall j, (j < length L)%nat -> (nth j L O < k)%nat /\ c <= lam (nth j L O)).
  { intros j Hj. destruct (in_filter_seq _ k _ (nth_In L O Hj)) as [H1 H2]. split; [exact H1|].
    destruct (Rle_dec c (lam (nth j L O))); [assumption|discriminate]. }
  assert (Hcol : forall y j, (j < S i)%nat -> mv (S i) V y (nth j L O) = y j).
  { intros y j Hj. unfold mv, V.
    rewrite (rsum_ext (S i) _ (fun j' => if Nat.eq_dec j' j then y j else 0)).
    - rewrite rsum_point. destruct (lt_dec j (S i)); [reflexivity|lia].
    - intros j' Hj'. destruct (Nat.eq_dec (nth j L O) (nth j' L O)) as [E|E], (Nat.eq_dec j' j) as [->|Ne].
      + ring.
      + exfalso. apply Ne. symmetry. exact (proj1 (NoDup_nth L O) HL j j' ltac:(lia) ltac:(lia) E).
      + exfalso. apply E. reflexivity.
      + ring. }
  assert (HVi : indep k (S i) V).
  { intros y Hy j Hj. rewrite <- (Hcol y j Hj). apply (nsq_zero k _ Hy). apply HLk. lia. }
  eapply Rle_trans; [|apply (eig_ge k _ i V HVi)]. apply low_ge; [exact HVi|]. intros y Hx.
  unfold rq. rewrite quad_diag.
  apply (Rmult_le_reg_r (nsq k (mv (S i) V y))); [exact Hx|]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra.
  rewrite Rmult_1_r. unfold nsq. rewrite <- rsum_scal. apply rsum_le. intros a Ha.
  destruct (classic (exists j, (j < S i)%nat /\ a = nth j L O)) as [(j & Hj & ->)|Hno].
  - pose proof (proj2 (HLk j ltac:(lia))). pose proof (Rle_0_sqr (mv (S i) V y (nth j L O))). unfold Rsqr in *. nra.
  - assert (E : mv (S i) V y a = 0).
    { unfold mv, V. rewrite (rsum_ext (S i) _ (fun _ => 0)); [apply rsum_zero|]. intros j Hj.
      destruct (Nat.eq_dec a (nth j L O)); [|ring]. exfalso. apply Hno. exists j. split; assumption. }
    rewrite E. lra.
Qed.

Lemma filter_perm_length : forall (f : R -> bool) l l', Permutation l l' -> length (filter f l) = length (filter f l').
Proof.
  intros f l l' H. induction H as [|x l l' _ IH|x y l|l l' l'' _ IH1 _ IH2]; simpl.
  - reflexivity.
  - destruct (f x); simpl; congruence.
  - destruct (f x), (f y); reflexivity.
  - congruence.
Qed.

Lemma filter_map_length : forall (f : R -> bool) (g : nat -> R) l,
  length (filter f (map g l)) = length (filter (fun a => f (g a)) l).
Proof. intros f g l. induction l as [|a l IH]; simpl; [reflexivity|]. destruct (f (g a)); simpl; congruence. Qed.

Lemma filter_seq_le : forall (f : nat -> bool) k, (length (filter f (seq 0 k)) <= k)%nat.
Proof.
  intros f k. induction k as [|k IH]; [simpl; lia|]. rewrite seq_S, filter_app, app_length. simpl.
  destruct (f k); simpl; lia.
Qed.

Lemma count_le : forall (f : nat -> bool) k i, (forall a, (i <= a < k)%nat -> f a = false) ->
  (length (filter f (seq 0 k)) <= i)%nat.
Proof.
  intros f k. induction k as [|k IH]; intros i H; [simpl; lia|]. rewrite seq_S, filter_app, app_length. simpl.
  destruct (le_lt_dec i k) as [Hik|Hki].
  - rewrite (H k ltac:(lia)). simpl. specialize (IH i ltac:(intros; apply H; lia)). lia.
  - pose proof (filter_seq_le f k). destruct (f k); simpl; lia.
Qed.

Lemma count_ge : forall (f : nat -> bool) k i, (i <= k)%nat -> (forall a, (a < i)%nat -> f a = true) ->
  (i <= length (filter f (seq 0 k)))%nat.
Proof.
  intros f k. induction k as [|k IH]; intros i Hi H; [lia|]. rewrite seq_S, filter_app, app_length. simpl.
  destruct (Nat.eq_dec i (S k)) as [->|Hne].
  - rewrite (H k ltac:(lia)). simpl. specialize (IH k ltac:(lia) ltac:(intros; apply H; lia)). lia.
  - specialize (IH i ltac:(lia) H). lia.
Qed.

Theorem cf_diag : forall k (lam lv : nat -> R),
  Permutation (map lam (seq 0 k)) (map lv (seq 0 k)) -> (forall i j, (i <= j < k)%nat -> lv j <= lv i) ->
  forall i, (i < k)%nat -> cf_eig k (diagm lam) i = lv i.
Proof.
  intros k lam lv Hp Hs i Hi. apply Rle_antisym.
  - apply diag_upper; [exact Hi|].
    rewrite <- (filter_map_length (fun v => if Rlt_dec (lv i) v then true else false) lam).
    rewrite (filter_perm_length _ _ _ Hp), filter_map_length. apply count_le.
    intros a Ha. destruct (Rlt_dec (lv i) (lv a)); [|reflexivity]. pose proof (Hs i a ltac:(lia)). lra.
  - apply diag_lower.
    rewrite <- (filter_map_length (fun v => if Rle_dec (lv i) v then true else false) lam).
    rewrite (filter_perm_length _ _ _ Hp), filter_map_length. apply count_ge; [lia|].
    intros a Ha. destruct (Rle_dec (lv i) (lv a)) as [|Hn]; [reflexivity|]. exfalso. apply Hn. apply Hs. lia.
Qed.

(** ** The link to the usual eigenvalues: a spectral decomposition

    If [M = U diag(lam) U^T] with [U^T U = I] ([U] orthogonal), the min-max
    values of [M] are the entries of [lam] sorted descending: [cf_eig] is
    the usual eigenvalue function wherever a spectral decomposition exists
    (for every real symmetric matrix, by the spectral theorem). *)

Lemma cf_eig_ext : forall n X Y i, (forall a b, (a < n)%nat -> (b < n)%nat -> X a b = Y a b) -> (i < n)%nat ->
  cf_eig n X i = cf_eig n Y i.
Proof.
  intros n X Y i H Hi.
  assert (H0 : opbound n n (fun a b => X a b - Y a b) 0).
  { apply (opbound_ext n n (fun _ _ => 0)); [intros a b Ha Hb; rewrite H by assumption; ring|apply opbound_zero]. }
  pose proof (cf_weyl n X Y 0 H0 i Hi) as Hw. apply abs_le_inv in Hw. lra.
Qed.

Theorem cf_spectral : forall k (U : nat -> nat -> R) (lam lv : nat -> R),
  (forall p q, (p < k)%nat -> (q < k)%nat -> mmul k (mtr U) U p q = idm p q) ->
  Permutation (map lam (seq 0 k)) (map lv (seq 0 k)) -> (forall i j, (i <= j < k)%nat -> lv j <= lv i) ->
  forall i, (i < k)%nat -> cf_eig k (mmul k (mmul k U (diagm lam)) (mtr U)) i = lv i.
Proof.
  intros k U lam lv HU Hp Hs i Hi.
  assert (E : forall j, (j < k)%nat -> cf_eig k (mmul k (mtr U) U) j = 1).
  { intros j Hj. rewrite (cf_eig_ext k _ idm j HU Hj). apply cf_idm, Hj. }
  destruct (ostrowski_cf k U (diagm lam) ltac:(lia) ltac:(rewrite E by lia; lra) i Hi) as (th & Hth & Eth).
  rewrite E, E in Hth by lia. replace th with 1 in Eth by lra. rewrite Eth, (cf_diag k lam lv Hp Hs i Hi). ring.
Qed.

From Flocq Require Import Core.
From Certbound Require Import FPModel Summation DotProduct FastCertificate MatvecChain OneStep ResidualEntry
  TheoremG TheoremGFloat TheoremGT StackedBounds.
Import ListNotations.
Local Notation succ := (succ radix2 fexp).
Local Notation pred := (pred radix2 fexp).

(** ** The matrix theorems with no spectral premise

    [weyl] and [eig_sorted] of the sections carry symmetry premises that
    the min-max versions do not need. *)

Lemma cf_weyl_h : forall n X Y c, symm n X -> symm n Y ->
  opbound n n (fun i j => X i j - Y i j) c -> forall i, (i < n)%nat -> Rabs (cf_eig n X i - cf_eig n Y i) <= c.
Proof. intros n X Y c _ _. apply cf_weyl. Qed.

Lemma cf_sorted_h : forall n M i j, symm n M -> (i <= j < n)%nat -> cf_eig n M j <= cf_eig n M i.
Proof. intros n M i j _. apply cf_sorted. Qed.

(** [Lemma112.lemma_11_2_matrix] for the min-max eigenvalues. *)
Theorem cf_lemma_11_2_matrix : forall m n d (A B L Mh U : nat -> nat -> R) (lam lv : nat -> R)
    alpha beta e a b eps c grow shrink i,
  (1 <= d)%nat -> (d <= m)%nat -> (d <= n)%nat -> (i < d)%nat ->
  Permutation (map lam (seq 0 d)) (map lv (seq 0 d)) -> (forall k l, (k <= l < d)%nat -> lv l <= lv k) ->
  opbound d d (fun k l => mmul d (mtr U) U k l - idm k l) alpha -> alpha < 1 ->
  opbound d d (fun k l => Mh k l - mmul d (mmul d (mtr L) (mmul m (mtr A) A)) L k l) beta ->
  opbound d d (fun k l => Mh k l - mmul d (mmul d U (diagm lam)) (mtr U) k l) e ->
  opbound d d (mmul m (mtr A) A) a ->
  opbound d d (fun k l => mmul n (mtr B) B k l - mmul d L (mtr L) k l) b -> a * b <= eps ->
  beta + e + eps <= c -> 1 + alpha <= grow -> 0 <= shrink <= 1 - alpha ->
  let sigma := sqrt (cf_eig n (mmul m (mtr (mmul d A (mtr B))) (mmul d A (mtr B))) i) in
  g_lower_end lv c grow shrink i <= sigma <= g_upper_end lv c grow shrink i.
Proof. exact (lemma_11_2_matrix cf_eig cf_weyl_h cf_gram_swap cf_gram_psd cf_idm cf_sorted_h cf_diag cf_ostrowski). Qed.

(** [Lemma112.theorem_g_matrix] for the min-max eigenvalues. *)
Theorem cf_theorem_g_matrix : forall k n (W Gh U : nat -> nat -> R) (lam lv : nat -> R) alpha beta e c grow shrink i,
  (1 <= k)%nat -> (i < k)%nat ->
  Permutation (map lam (seq 0 k)) (map lv (seq 0 k)) -> (forall p q, (p <= q < k)%nat -> lv q <= lv p) ->
  opbound k k (fun p q => mmul k (mtr U) U p q - idm p q) alpha -> alpha < 1 ->
  opbound k k (fun p q => Gh p q - mmul n W (mtr W) p q) beta ->
  opbound k k (fun p q => Gh p q - mmul k (mmul k U (diagm lam)) (mtr U) p q) e ->
  beta + e <= c -> 1 + alpha <= grow -> 0 <= shrink <= 1 - alpha ->
  g_lower_end lv c grow shrink i <= sqrt (cf_eig k (mmul n W (mtr W)) i) <= g_upper_end lv c grow shrink i.
Proof. exact (theorem_g_matrix cf_eig cf_weyl_h cf_gram_psd cf_idm cf_sorted_h cf_diag cf_ostrowski). Qed.

(** [Lemma112.theorem_gt_matrix] for the min-max eigenvalues. *)
Theorem cf_theorem_gt_matrix : forall k n (W Gh Q T : nat -> nat -> R) (la lb : nat -> R) alpha beta e c grow shrink i,
  (1 <= k)%nat -> (i < k)%nat -> symm k T ->
  (forall p, (p < k)%nat -> la p <= cf_eig k T p <= lb p) ->
  opbound k k (fun p q => mmul k (mtr Q) Q p q - idm p q) alpha -> alpha < 1 ->
  opbound k k (fun p q => Gh p q - mmul n W (mtr W) p q) beta ->
  opbound k k (fun p q => Gh p q - mmul k (mmul k Q T) (mtr Q) p q) e ->
  beta + e <= c -> 1 + alpha <= grow -> 0 <= shrink <= 1 - alpha ->
  g_lower_end la c grow shrink i <= sqrt (cf_eig k (mmul n W (mtr W)) i) <= g_upper_end lb c grow shrink i.
Proof. exact (theorem_gt_matrix cf_eig cf_weyl_h cf_gram_psd cf_idm cf_sorted_h cf_ostrowski). Qed.

(** [Lemma112.certify_stack_theorem_g_sound] for the min-max eigenvalues. *)
Theorem cf_certify_stack_theorem_g_sound : forall m n d (A B L U Pm Mh GAh GBh : nat -> nat -> R) (lam lv : nat -> R)
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
  g_lower_end lv c grow shrink i <= sqrt (cf_eig n (mmul m (mtr (mmul d A (mtr B))) (mmul d A (mtr B))) i)
    <= g_upper_end lv c grow shrink i.
Proof. exact (certify_stack_theorem_g_sound cf_eig cf_weyl_h cf_gram_swap cf_gram_psd cf_idm cf_sorted_h cf_diag cf_ostrowski). Qed.

(** [StackedBounds.certify_stack_theorem_g_end_to_end] for the min-max eigenvalues. *)
Theorem cf_certify_stack_theorem_g_end_to_end : forall m n d (A B L U Pm Mh GAh GBh : nat -> nat -> R) (lam lv : nat -> R)
    (tGA tGB tP tM : nat -> nat -> dtree) (tvA twA tv tw tz tc tr : nat -> dtree) (tsB : stree)
    nKA N n1 ninf nL alU e eRR gum gun gu2 undA undB cu i,
  INR (d * d) <= 2 ^ 40 ->
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
  norm2_upper_computed d d L nL ->
  (forall j, (j < d)%nat -> Permutation (dpairs (tv j)) (map (fun l => (mtr (mabs (mtr L)) j l, 1)) (seq 0 d))) ->
  (forall k, (k < d)%nat ->
     Permutation (dpairs (tw k)) (map (fun l => (kmax GAh k l, inflate d (dfl (tv l)))) (seq 0 d))) ->
  (forall k, (k < d)%nat ->
     Permutation (dpairs (tz k)) (map (fun l => (mabs (mtr L) k l, inflate d (dfl (tw l)))) (seq 0 d))) ->
  (forall k, (k < d)%nat -> inflate d (dfl (tz k)) <= N) ->
  gamma (d + d) <= gu2 -> 2 * INR d * eta * sqrt (INR d * INR d) <= cu ->
  let beta := succ (fl (succ (fl (succ (fl (gu2 * N)) + succ (fl (succ (fl (nL * nL)) * errA))))
                        + succ (fl (cu * succ (fl (1 + fl (2 * nL))))))) in
  residual_norm_upper_sym_computed d d GBh L (fun _ => 1) eRR ->
  (forall j, (j < d)%nat -> Permutation (dpairs (tc j)) (map (fun k => (mtr (mabs GAh) j k, 1)) (seq 0 d))) ->
  (forall k, (k < d)%nat -> Permutation (dpairs (tr k)) (map (fun j => (mabs GAh k j, 1)) (seq 0 d))) ->
  (forall j, (j < d)%nat -> inflate d (dfl (tc j)) <= n1) ->
  (forall k, (k < d)%nat -> inflate d (dfl (tr k)) <= ninf) ->
  let nGA := succ (fl (succ (fl (sqrt n1)) * succ (fl (sqrt ninf)))) in
  let eps := succ (fl (succ (fl (nGA + errA)) * succ (fl (errB + eRR)))) in
  (* [eigh] of [M_hat]: any [U], [lam]; [lv] = [lam] sorted descending *)
  gram_deviation_upper_computed d d U alU -> alU < 1 ->
  residual_norm_upper_sym_computed d d Mh U lam e ->
  Permutation (map lam (seq 0 d)) (map lv (seq 0 d)) -> (forall k l, (k <= l < d)%nat -> lv l <= lv k) ->
  let c := succ (fl (succ (fl (beta + e)) + eps)) in
  let grow := succ (fl (1 + alU)) in
  let shrink := Rmax (pred (fl (1 - alU))) 0 in
  g_lower_end lv c grow shrink i <= sqrt (cf_eig n (mmul m (mtr (mmul d A (mtr B))) (mmul d A (mtr B))) i)
    <= g_upper_end lv c grow shrink i.
Proof. exact (certify_stack_theorem_g_end_to_end cf_eig cf_weyl_h cf_gram_swap cf_gram_psd cf_idm cf_sorted_h cf_diag cf_ostrowski). Qed.

(** ** Sylvester's law of inertia for [T - mu I = L D L^T] (Lemma S)

    [SturmFloat.v] takes the count of negative pivots of [T_f - mu I] as
    the number of eigenvalues below [mu] ([sylvester]) and Weyl for
    tridiagonal matrices as named hypotheses on an ascending eigenvalue
    function [lam f j]; for [lam f j := cf_eig n (trim d f) (n - 1 - j)]
    both are proved here: [T_f - mu I = L diag(p) L^T] with [L] unit lower
    bidiagonal, [L_(k+1,k) = f_k / p_k] ([ldl_entry]), [L] is invertible so
    [lambda_min(L^T L) > 0] ([gram_min_pos]: an explicit left inverse from
    [indep_span]), Ostrowski keeps the signs, and the diagonal's signs are
    counted ([diag_upper], [diag_lower]). *)

From Certbound Require Import IEEEFinite SturmFloat.

Lemma rsum_support0 : forall n g, (forall r, (r < n)%nat -> g r = 0) -> rsum n g = 0.
Proof. intros n g H. rewrite (rsum_ext n g (fun _ => 0)) by exact H. apply rsum_zero. Qed.

Lemma rsum_support1 : forall n g k, (k < n)%nat -> (forall r, (r < n)%nat -> r <> k -> g r = 0) -> rsum n g = g k.
Proof.
  intros n g k Hk H. rewrite (rsum_ext n g (fun r => if Nat.eq_dec r k then g k else 0)).
  - rewrite rsum_point. destruct (lt_dec k n); [reflexivity|lia].
  - intros r Hr. destruct (Nat.eq_dec r k) as [->|Hne]; [reflexivity|apply H; assumption].
Qed.

Lemma rsum_support2 : forall n g k1 k2, (k1 < n)%nat -> (k2 < n)%nat -> k1 <> k2 ->
  (forall r, (r < n)%nat -> r <> k1 -> r <> k2 -> g r = 0) -> rsum n g = g k1 + g k2.
Proof.
  intros n g k1 k2 H1 H2 Hne H.
  rewrite (rsum_ext n g (fun r => (if Nat.eq_dec r k1 then g k1 else 0) + (if Nat.eq_dec r k2 then g k2 else 0))).
  - rewrite rsum_add, !rsum_point. destruct (lt_dec k1 n), (lt_dec k2 n); try lia. reflexivity.
  - intros r Hr. destruct (Nat.eq_dec r k1) as [E1|N1], (Nat.eq_dec r k2) as [E2|N2]; try lia.
    + subst r. ring.
    + subst r. ring.
    + rewrite H by assumption. ring.
Qed.

Definition ldl_L (f p : nat -> R) (a r : nat) : R :=
  if Nat.eq_dec a r then 1 else if Nat.eq_dec a (S r) then f r / p r else 0.

(** [T_f - mu I = L diag(p) L^T] entrywise, [p] the exact pivots. *)
Theorem ldl_entry : forall d mu n f, (forall i, (i < n)%nat -> pivots d mu (fun k => f k * f k) i <> 0) ->
  forall a b, (a < n)%nat -> (b < n)%nat ->
  rsum n (fun r => ldl_L f (pivots d mu (fun k => f k * f k)) a r * pivots d mu (fun k => f k * f k) r
                   * ldl_L f (pivots d mu (fun k => f k * f k)) b r)
  = trim d f a b - mu * idm a b.
Proof.
  intros d mu n f Hp a b Ha Hb. set (p := pivots d mu (fun k => f k * f k)) in *.
  unfold trim, idm.
  destruct (Nat.eq_dec a b) as [<-|Nab].
  - destruct a as [|a'].
    + rewrite (rsum_support1 n _ O Ha).
      * unfold ldl_L. destruct (Nat.eq_dec 0 0); [|lia]. unfold p. simpl. ring.
      * intros r Hr Hne. unfold ldl_L. destruct (Nat.eq_dec 0 r); [lia|]. destruct (Nat.eq_dec 0 (S r)); [lia|]. ring.
    + rewrite (rsum_support2 n _ (S a') a' Ha ltac:(lia) ltac:(lia)).
      * unfold ldl_L. destruct (Nat.eq_dec (S a') (S a')); [|lia]. destruct (Nat.eq_dec (S a') a'); [lia|].
        destruct (Nat.eq_dec (S a') (S a')); [|lia].
        assert (Hpa : p a' <> 0) by (apply Hp; lia).
        assert (E : p (S a') = (d (S a') - mu) - f a' * f a' / p a') by reflexivity.
        rewrite E. field. exact Hpa.
      * intros r Hr N1 N2. unfold ldl_L. destruct (Nat.eq_dec (S a') r); [lia|].
        destruct (Nat.eq_dec (S a') (S r)); [lia|]. ring.
  - destruct (Nat.eq_dec (S a) b) as [<-|Nsa].
    + rewrite (rsum_support1 n _ a Ha).
      * unfold ldl_L. destruct (Nat.eq_dec a a); [|lia]. destruct (Nat.eq_dec (S a) a); [lia|].
        destruct (Nat.eq_dec (S a) (S a)); [|lia]. field. apply Hp, Ha.
      * intros r Hr Hne. unfold ldl_L.
        destruct (Nat.eq_dec a r), (Nat.eq_dec a (S r)), (Nat.eq_dec (S a) r), (Nat.eq_dec (S a) (S r)); try lia; ring.
    + destruct (Nat.eq_dec (S b) a) as [<-|Nsb].
      * rewrite (rsum_support1 n _ b Hb).
        -- unfold ldl_L. destruct (Nat.eq_dec b b); [|lia]. destruct (Nat.eq_dec (S b) b); [lia|].
           destruct (Nat.eq_dec (S b) (S b)); [|lia]. field. apply Hp, Hb.
        -- intros r Hr Hne. unfold ldl_L.
           destruct (Nat.eq_dec (S b) r), (Nat.eq_dec (S b) (S r)), (Nat.eq_dec b r), (Nat.eq_dec b (S r)); try lia; ring.
      * rewrite rsum_support0; [ring|]. intros r Hr. unfold ldl_L.
        destruct (Nat.eq_dec a r), (Nat.eq_dec a (S r)), (Nat.eq_dec b r), (Nat.eq_dec b (S r)); try lia; ring.
Qed.

(** A square matrix with independent columns: [lambda_min(M^T M) > 0]. *)
Lemma indep_transpose : forall n M, indep n n M -> indep n n (mtr M).
Proof.
  intros n M HM y Hy. destruct (indep_span n M HM y) as [x Hx].
  assert (E : nsq n y = rsum n (fun l => x l * mv n (mtr M) y l)).
  { unfold nsq. rewrite (rsum_ext n (fun j => y j * y j) (fun a => rsum n (fun l => y a * M a l * x l))).
    - rewrite rsum_swap. apply rsum_ext. intros l _. unfold mv, mtr. rewrite <- rsum_scal. apply rsum_ext.
      intros; ring.
    - intros a Ha. rewrite <- (Hx a Ha) at 2. unfold mv. rewrite <- rsum_scal. apply rsum_ext. intros; ring. }
  assert (H0 : nsq n y = 0).
  { rewrite E. apply rsum_support0. intros l Hl. rewrite (nsq_zero n _ Hy l Hl). ring. }
  intros j Hj. exact (nsq_zero n y H0 j Hj).
Qed.

Theorem gram_min_pos : forall n M, (1 <= n)%nat -> indep n n M -> 0 < cf_eig n (mmul n (mtr M) M) (n - 1).
Proof.
  intros n M Hn HM. pose proof (indep_transpose n M HM) as HMt.
  destruct (finite_choice n (fun j w => forall l, (l < n)%nat -> mv n (mtr M) w l = eunit j l)) as [W HW].
  { intros j _. apply (indep_span n (mtr M) HMt (eunit j)). }
  set (F := rsum n (fun j => rsum n (fun a => W a j * W a j))).
  assert (HF : 0 <= F) by (apply rsum_nonneg; intros; apply rsum_nonneg; intros; apply Rle_0_sqr).
  (* [x_j = sum_a W_aj (M x)_a] *)
  assert (Hleft : forall x j, (j < n)%nat -> x j = rsum n (fun a => W a j * mv n M x a)).
  { intros x j Hj. transitivity (rsum n (fun l => x l * mv n (mtr M) (fun a => W a j) l)).
    - rewrite (rsum_ext n _ (fun l => x l * eunit j l)) by (intros l Hl; rewrite HW by assumption; reflexivity).
      rewrite (rsum_support1 n _ j Hj); [unfold eunit; destruct (Nat.eq_dec j j); [ring|lia]|].
      intros r _ Hr. unfold eunit. destruct (Nat.eq_dec r j); [lia|ring].
    - unfold mv, mtr. rewrite (rsum_ext n _ (fun l => rsum n (fun a => W a j * M a l * x l)))
        by (intros; rewrite <- rsum_scal; apply rsum_ext; intros; ring).
      rewrite rsum_swap. apply rsum_ext. intros a _. rewrite <- rsum_scal. apply rsum_ext. intros; ring. }
  assert (Hkey : forall x, nsq n x <= F * nsq n (mv n M x)).
  { intros x. unfold F. rewrite rsum_mulr. unfold nsq at 1. apply rsum_le. intros j Hj.
    rewrite (Hleft x j Hj). apply (cauchy_schwarz n (fun a => W a j) (mv n M x)). }
  set (V := idm). assert (HV : indep n (S (n - 1)) idm) by (apply idm_indep; lia).
  eapply Rlt_le_trans; [|apply (eig_ge n _ (n - 1) idm HV)].
  apply Rlt_le_trans with (/ (F + 1)); [apply Rinv_0_lt_compat; lra|].
  apply low_ge; [exact HV|]. intros y Hy. unfold rq.
  change (mmul n (mtr M) M) with (mmul n (mtr M) (mtr (mtr M))). rewrite quad_gram.
  change (mv n (mtr (mtr M)) (mv (S (n - 1)) idm y)) with (mv n M (mv (S (n - 1)) idm y)).
  pose proof (Hkey (mv (S (n - 1)) idm y)) as Hk. pose proof (nsq_nonneg n (mv n M (mv (S (n - 1)) idm y))).
  apply (Rmult_le_reg_r (nsq n (mv (S (n - 1)) idm y))); [exact Hy|].
  unfold Rdiv. rewrite Rmult_assoc, Rinv_l, Rmult_1_r by lra.
  apply (Rmult_le_reg_l (F + 1)); [lra|]. rewrite <- Rmult_assoc, Rinv_r, Rmult_1_l by lra. nra.
Qed.

(** [L] is invertible: forward substitution. *)
Lemma ldl_L_mv : forall n f p x a, (a < n)%nat ->
  mv n (ldl_L f p) x a = x a + (match a with O => 0 | S a' => f a' / p a' * x a' end).
Proof.
  intros n f p x a Ha. unfold mv. destruct a as [|a'].
  - rewrite (rsum_support1 n _ O Ha).
    + unfold ldl_L. destruct (Nat.eq_dec 0 0); [ring|lia].
    + intros r _ Hr. unfold ldl_L. destruct (Nat.eq_dec 0 r); [lia|]. destruct (Nat.eq_dec 0 (S r)); [lia|ring].
  - rewrite (rsum_support2 n _ (S a') a' Ha ltac:(lia) ltac:(lia)).
    + unfold ldl_L. destruct (Nat.eq_dec (S a') (S a')); [|lia]. destruct (Nat.eq_dec (S a') a'); [lia|].
      destruct (Nat.eq_dec (S a') (S a')); [ring|lia].
    + intros r _ N1 N2. unfold ldl_L. destruct (Nat.eq_dec (S a') r); [lia|].
      destruct (Nat.eq_dec (S a') (S r)); [lia|ring].
Qed.

Lemma ldl_L_indep : forall n f p, indep n n (ldl_L f p).
Proof.
  intros n f p x Hx.
  assert (H0 : forall a, (a < n)%nat -> mv n (ldl_L f p) x a = 0) by (intros a Ha; apply (nsq_zero n _ Hx a Ha)).
  intros j. induction j as [|j IH]; intros Hj.
  - specialize (H0 O Hj). rewrite ldl_L_mv in H0 by exact Hj. lra.
  - specialize (H0 (S j) Hj). rewrite ldl_L_mv in H0 by exact Hj. rewrite IH in H0 by lia. lra.
Qed.

(** The shift: [lambda_i(X - mu I) = lambda_i(X) - mu]. *)
Lemma quad_shift : forall n X mu x, qform n (fun a b => X a b - mu * idm a b) x = qform n X x - mu * nsq n x.
Proof.
  intros n X mu x. unfold qform, nsq. rewrite <- rsum_scal, <- rsum_sub. apply rsum_ext. intros a Ha.
  rewrite mv_sub.
  assert (E : mv n (fun a b => mu * idm a b) x a = mu * x a).
  { unfold mv. rewrite (rsum_ext n _ (fun j => mu * (idm a j * x j))) by (intros; ring).
    rewrite rsum_scal. fold (mv n idm x a). rewrite mv_idm by exact Ha. reflexivity. }
  rewrite E. ring.
Qed.

Lemma cf_shift : forall n X mu i, (i < n)%nat -> cf_eig n (fun a b => X a b - mu * idm a b) i = cf_eig n X i - mu.
Proof.
  intros n X mu i Hi. apply Rle_antisym.
  - enough (cf_eig n (fun a b => X a b - mu * idm a b) i <= cf_eig n X i + - mu) by lra.
    apply eig_mono; [exact Hi|]. intros x. rewrite quad_shift. lra.
  - enough (cf_eig n X i <= cf_eig n (fun a b => X a b - mu * idm a b) i + mu) by lra.
    apply eig_mono; [exact Hi|]. intros x. rewrite quad_shift. lra.
Qed.

(** A positive lower bound on the absolute values of finitely many nonzero reals. *)
Lemma min_abs_pos : forall n (p : nat -> R), (forall a, (a < n)%nat -> p a <> 0) ->
  exists dl, 0 < dl /\ forall a, (a < n)%nat -> dl <= Rabs (p a).
Proof.
  induction n as [|n IH]; intros p H.
  - exists 1. split; [lra|]. intros; lia.
  - destruct (IH p) as (dl & Hdl & Hb); [intros; apply H; lia|].
    exists (Rmin dl (Rabs (p n))). split.
    + apply Rmin_pos; [exact Hdl|apply Rabs_pos_lt, H; lia].
    + intros a Ha. destruct (Nat.eq_dec a n) as [->|Hne]; [apply Rmin_r|].
      eapply Rle_trans; [apply Rmin_l|apply Hb; lia].
Qed.

Lemma count_signs : forall n (p : nat -> R) dl, 0 < dl -> (forall a, (a < n)%nat -> dl <= Rabs (p a)) ->
  (length (filter (fun a => if Rlt_dec (- dl) (p a) then true else false) (seq 0 n)) + negcount p n = n)%nat /\
  (length (filter (fun a => if Rle_dec dl (p a) then true else false) (seq 0 n)) + negcount p n = n)%nat.
Proof.
  induction n as [|n IH]; intros p dl Hdl H; [simpl; lia|].
  destruct (IH p dl Hdl) as [H1 H2]; [intros; apply H; lia|].
  rewrite seq_S, !filter_app, !app_length. simpl negcount. simpl.
  pose proof (H n ltac:(lia)) as Hn. unfold Rabs in Hn.
  destruct (Rcase_abs (p n)) as [Hneg|Hpos].
  - destruct (Rlt_dec (- dl) (p n)); [lra|]. destruct (Rle_dec dl (p n)); [lra|].
    destruct (Rlt_dec (p n) 0); [|lra]. simpl. lia.
  - destruct (Rlt_dec (- dl) (p n)); [|lra]. destruct (Rle_dec dl (p n)); [|lra].
    destruct (Rlt_dec (p n) 0); [lra|]. simpl. lia.
Qed.

Theorem cf_sylvester : forall d mu n f,
  (forall i, (i < n)%nat -> pivots d mu (fun k => f k * f k) i <> 0) ->
  forall j, (j < n)%nat ->
  ((j < negcount (pivots d mu (fun k => (f k * f k)%R)) n)%nat -> cf_eig n (trim d f) (n - 1 - j) < mu) /\
  ((negcount (pivots d mu (fun k => (f k * f k)%R)) n <= j)%nat -> mu <= cf_eig n (trim d f) (n - 1 - j)).
Proof.
  intros d mu n f Hp j Hj. set (p := pivots d mu (fun k => f k * f k)) in *.
  set (i := (n - 1 - j)%nat). assert (Hi : (i < n)%nat) by (unfold i; lia).
  set (L := ldl_L f p).
  (* [lambda_i(T_f) - mu = theta lambda_i(diag p)], [theta > 0] *)
  assert (E1 : cf_eig n (trim d f) i - mu = cf_eig n (mmul n (mmul n L (diagm p)) (mtr L)) i).
  { rewrite <- cf_shift by exact Hi. apply cf_eig_ext; [|exact Hi]. intros a b Ha Hb.
    rewrite diag_congruence. unfold L, p. symmetry. apply ldl_entry; assumption. }
  assert (Hpos : 0 < cf_eig n (mmul n (mtr L) L) (n - 1)) by (apply gram_min_pos; [lia|apply ldl_L_indep]).
  destruct (ostrowski_cf n L (diagm p) ltac:(lia) Hpos i Hi) as (th & Hth & Eth).
  assert (Hth0 : 0 < th) by lra.
  destruct (min_abs_pos n p Hp) as (dl & Hdl & Hb).
  destruct (count_signs n p dl Hdl Hb) as [C1 C2].
  split; intros Hc.
  - (* [i >= n - c]: at most [i] pivots exceed [-dl], so [lambda_i(diag p) <= -dl < 0] *)
    assert (Hd : cf_eig n (diagm p) i <= - dl) by (apply diag_upper; [exact Hi|unfold i in *; lia]).
    assert (th * cf_eig n (diagm p) i < 0) by nra. lra.
  - (* [i < n - c]: at least [i + 1] pivots are [>= dl], so [lambda_i(diag p) >= dl > 0] *)
    assert (Hd : dl <= cf_eig n (diagm p) i) by (apply diag_lower; unfold i in *; lia).
    assert (0 < th * cf_eig n (diagm p) i) by nra. lra.
Qed.

Theorem cf_weyl_trim : forall d e n f c,
  opbound n n (fun i j => trim d f i j - trim d e i j) c ->
  forall j, (j < n)%nat -> Rabs (cf_eig n (trim d f) (n - 1 - j) - cf_eig n (trim d e) (n - 1 - j)) <= c.
Proof. intros d e n f c H j Hj. apply cf_weyl; [exact H|lia]. Qed.

(** Lemma S's count enclosure with no linear-algebra premise: the count [c]
    of negative pivots of the code's recurrence brackets the Courant-Fischer
    eigenvalues of the stored [T = trim d e] ([j]-th smallest is
    [cf_eig n T (n - 1 - j)]). *)
Theorem cf_lemma_s_count_enclosure : forall (d e : nat -> R) (mu : R) (n : nat),
  (forall i, format (d i)) -> format mu ->
  (forall k, (S k < n)%nat -> e k = 0 \/ min_normal < sq e k) ->
  (forall k, (S k < n)%nat -> sq e k = 0 \/ min_normal < Rabs (quot d e mu k)) ->
  (forall i, (i < n)%nat -> q d e mu i <> 0) ->
  forall emx delta, 0 <= emx -> (forall k, (S k < n)%nat -> Rabs (e k) <= emx) -> 2 * emx * rho <= delta ->
  forall j, (j < n)%nat ->
  ((j < negcount (q d e mu) n)%nat -> cf_eig n (trim d e) (n - 1 - j) < mu + delta) /\
  ((negcount (q d e mu) n <= j)%nat -> mu - delta <= cf_eig n (trim d e) (n - 1 - j)).
Proof.
  intros d e mu n Hd Hm Ge Gq G0 emx delta H0 Hemx Hdl j Hj.
  exact (lemma_s_count_enclosure d e mu n Hd Hm Ge Gq G0 (fun f j => cf_eig n (trim d f) (n - 1 - j))
           (fun f Hf j Hj => cf_sylvester d mu n f Hf j Hj) (fun f c Hc j Hj => cf_weyl_trim d e n f c Hc j Hj)
           emx delta H0 Hemx Hdl j Hj).
Qed.

(** The normalised path ([tridiagonal._sturm_normalised]) on IEEE floats, likewise. *)
Theorem cf_sturm_normalised_enclosure :
  forall (bd be : nat -> b64) (bmu : b64) (n : nat),
  (forall i, is_finite (bd i) = true) -> (forall k, is_finite (be k) = true) -> is_finite bmu = true ->
  (forall i, (i < n)%nat -> Rabs (B2R (bd i)) < 2) ->
  (forall k, (S k < n)%nat -> Rabs (B2R (be k)) < 2) ->
  (forall k, (S k < n)%nat -> B2R (be k) = 0 \/ bpow radix2 (-300) <= Rabs (B2R (be k))) ->
  Rabs (B2R bmu) <= 8 ->
  (forall i, (i < n)%nat -> is_finite (bq bd be bmu i) = true ->
     bpow radix2 (-400) <= Rabs (B2R (bq bd be bmu i))) ->
  forall emx delta, 0 <= emx -> (forall k, (S k < n)%nat -> Rabs (B2R (be k)) <= emx) ->
  2 * emx * rho <= delta ->
  forall j, (j < n)%nat ->
  ((j < negcount (fun i => B2R (bq bd be bmu i)) n)%nat ->
     cf_eig n (trim (fun i => B2R (bd i)) (fun k => B2R (be k))) (n - 1 - j) < B2R bmu + delta) /\
  ((negcount (fun i => B2R (bq bd be bmu i)) n <= j)%nat ->
     B2R bmu - delta <= cf_eig n (trim (fun i => B2R (bd i)) (fun k => B2R (be k))) (n - 1 - j)).
Proof.
  intros bd be bmu n Hd He Hm Hds Hes Het Hms Ht emx delta H0 Hemx Hdl j Hj.
  exact (sturm_normalised_enclosure bd be bmu n Hd He Hm Hds Hes Het Hms Ht
           (fun f j => cf_eig n (trim (fun i => B2R (bd i)) f) (n - 1 - j))
           (fun f Hf j Hj => cf_sylvester (fun i => B2R (bd i)) (B2R bmu) n f Hf j Hj)
           (fun f c Hc j Hj => cf_weyl_trim (fun i => B2R (bd i)) (fun k => B2R (be k)) n f c Hc j Hj)
           emx delta H0 Hemx Hdl j Hj).
Qed.

(** The guarded path ([tridiagonal._sturm_guarded]) on IEEE floats, likewise. *)
Theorem cf_sturm_counts_enclosure :
  forall (bd be : nat -> b64) (bmu : b64) (n : nat),
  (forall i, (i < n)%nat -> is_finite (bq bd be bmu i) = true /\ B2R (bq bd be bmu i) <> 0) ->
  (forall k, (S k < n)%nat -> B2R (be k) = 0 \/ min_normal < B2R (bsq be k)) ->
  (forall k, (S k < n)%nat -> B2R (bsq be k) = 0 \/ min_normal < Rabs (B2R (bquot bd be bmu k))) ->
  forall emx delta, 0 <= emx -> (forall k, (S k < n)%nat -> Rabs (B2R (be k)) <= emx) ->
  2 * emx * rho <= delta ->
  forall j, (j < n)%nat ->
  ((j < negcount (fun i => B2R (bq bd be bmu i)) n)%nat ->
     cf_eig n (trim (fun i => B2R (bd i)) (fun k => B2R (be k))) (n - 1 - j) < B2R bmu + delta) /\
  ((negcount (fun i => B2R (bq bd be bmu i)) n <= j)%nat ->
     B2R bmu - delta <= cf_eig n (trim (fun i => B2R (bd i)) (fun k => B2R (be k))) (n - 1 - j)).
Proof.
  intros bd be bmu n Hq Ge Gq emx delta H0 Hemx Hdl j Hj.
  exact (sturm_counts_enclosure bd be bmu n Hq Ge Gq
           (fun f j => cf_eig n (trim (fun i => B2R (bd i)) f) (n - 1 - j))
           (fun f Hf j Hj => cf_sylvester (fun i => B2R (bd i)) (B2R bmu) n f Hf j Hj)
           (fun f c Hc j Hj => cf_weyl_trim (fun i => B2R (bd i)) (fun k => B2R (be k)) n f c Hc j Hj)
           emx delta H0 Hemx Hdl j Hj).
Qed.

(** Two normalised Sturm runs on the same [T] bracket one eigenvalue, with
    the code's outward ends ([tridiagonal_eigenvalue_bounds]: [muL] with
    count [<= j], [muU] with count [> j]); the descending index of the
    [j]-th smallest is [n - 1 - j] (the form of [cf_theorem_gt_matrix]'s
    bracket premise). *)
Theorem cf_sturm_bracket : forall (bd be : nat -> b64) (bmuL bmuU : b64) (n : nat) emx delta j,
  (forall i, is_finite (bd i) = true) -> (forall k, is_finite (be k) = true) ->
  is_finite bmuL = true -> is_finite bmuU = true ->
  (forall i, (i < n)%nat -> Rabs (B2R (bd i)) < 2) ->
  (forall k, (S k < n)%nat -> Rabs (B2R (be k)) < 2) ->
  (forall k, (S k < n)%nat -> B2R (be k) = 0 \/ bpow radix2 (-300) <= Rabs (B2R (be k))) ->
  Rabs (B2R bmuL) <= 8 -> Rabs (B2R bmuU) <= 8 ->
  (forall i, (i < n)%nat -> is_finite (bq bd be bmuL i) = true -> bpow radix2 (-400) <= Rabs (B2R (bq bd be bmuL i))) ->
  (forall i, (i < n)%nat -> is_finite (bq bd be bmuU i) = true -> bpow radix2 (-400) <= Rabs (B2R (bq bd be bmuU i))) ->
  0 <= emx -> (forall k, (S k < n)%nat -> Rabs (B2R (be k)) <= emx) -> 2 * emx * rho <= delta ->
  (j < n)%nat ->
  (negcount (fun i => B2R (bq bd be bmuL i)) n <= j)%nat ->
  (j < negcount (fun i => B2R (bq bd be bmuU i)) n)%nat ->
  pred (fl (B2R bmuL - delta))
    <= cf_eig n (trim (fun i => B2R (bd i)) (fun k => B2R (be k))) (n - 1 - j)
    <= succ (fl (B2R bmuU + delta)).
Proof.
  intros bd be bmuL bmuU n emx delta j Hd He HmL HmU Hds Hes Het HsL HsU HtL HtU H0 Hemx Hdl Hj HcL HcU.
  destruct (cf_sturm_normalised_enclosure bd be bmuL n Hd He HmL Hds Hes Het HsL HtL emx delta H0 Hemx Hdl j Hj)
    as [_ HL].
  destruct (cf_sturm_normalised_enclosure bd be bmuU n Hd He HmU Hds Hes Het HsU HtU emx delta H0 Hemx Hdl j Hj)
    as [HU _].
  apply tridiagonal_eigenvalue_bounds_outward; [apply HL, HcL|apply HU, HcU].
Qed.
