(** * Lemma 11.3: Lemma 11.2 with Theorem G-T (the d x d core without eigenvectors)

    Backs [proofs/enclosure.md] §11 Lemma 11.3 (its matrix statement and
    proof: Lemma 11.2's congruence steps (a), (b) with Theorem G-T in step
    (c)); code: [product._theorem_gt_ends] (the [d >= THEOREM_GT_MIN_INNER]
    branch of [product._certify_stack_theorem_g]), whose floats
    [alpha] ([_stacked.gram_deviation_upper] on the [dorgqr] factor),
    [e] ([_stacked.tridiagonal_residual_norm_upper]), the brackets
    ([_stacked.tridiagonal_eigenvalue_brackets]), [beta], [eps] and
    [c = up(up(beta + e) + eps)] are its premises.

    For ANY real [d x d] matrices [Q], [M_hat], a real symmetric [T] with
    brackets [a_i <= lambda_i(T) <= b_i], [||Q^T Q - I||_2 <= alpha < 1],
    [||M_hat - Q T Q^T||_2 <= e], [||M_hat - L^T G_A L||_2 <= beta],
    [||G_A||_2 <= a], [||G_B - L L^T||_2 <= b], [a b <= eps] and
    [c >= beta + e + eps]: Theorem G-T's float ends ([TheoremGFloat]'s
    [g_lower_end]/[g_upper_end] with [a_i], [b_i]) enclose
    [sigma_i(A B^T)] for [i < d].  Eigenvalues are [CourantFischer.cf_eig]
    (min-max), so no spectral premise remains. *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core.
From Certbound Require Import NormBounds TheoremGFloat TheoremGT Lemma112 CourantFischer.
Open Scope R_scope.

Theorem cf_lemma_11_3_matrix : forall m n d (A B L Mh Q T : nat -> nat -> R) (la lb : nat -> R)
    alpha beta e a b eps c grow shrink i,
  (1 <= d)%nat -> (d <= m)%nat -> (d <= n)%nat -> (i < d)%nat -> symm d T ->
  (forall p, (p < d)%nat -> la p <= cf_eig d T p <= lb p) ->
  opbound d d (fun k l => mmul d (mtr Q) Q k l - idm k l) alpha -> alpha < 1 ->
  opbound d d (fun k l => Mh k l - mmul d (mmul d (mtr L) (mmul m (mtr A) A)) L k l) beta ->
  opbound d d (fun k l => Mh k l - mmul d (mmul d Q T) (mtr Q) k l) e ->
  opbound d d (mmul m (mtr A) A) a ->
  opbound d d (fun k l => mmul n (mtr B) B k l - mmul d L (mtr L) k l) b -> a * b <= eps ->
  beta + e + eps <= c -> 1 + alpha <= grow -> 0 <= shrink <= 1 - alpha ->
  let sigma := sqrt (cf_eig n (mmul m (mtr (mmul d A (mtr B))) (mmul d A (mtr B))) i) in
  g_lower_end la c grow shrink i <= sigma <= g_upper_end lb c grow shrink i.
Proof.
  intros m n d A B L Mh Q T la lb alpha beta e a b eps c grow shrink i Hd Hm Hn Hi HT Hbr HQ Hal HM HE HA HB Hab
    Hc Hg Hs sigma.
  set (Wt := mmul m (mtr (mmul d A (mtr B))) (mmul d A (mtr B))).
  set (M' := mmul d (mmul d (mtr L) (mmul m (mtr A) A)) L).
  set (H := mmul d (mmul d Q T) (mtr Q)).
  set (QQ := mmul d (mtr Q) Q).
  set (mu_min := cf_eig d QQ (d - 1)%nat). set (mu_max := cf_eig d QQ O).
  assert (HsQQ : symm d QQ) by (intros k l _ _; unfold QQ, mmul, mtr; apply rsum_ext; intros; ring).
  assert (HwU : forall k, (k < d)%nat -> Rabs (cf_eig d QQ k - 1) <= alpha).
  { intros k Hk. rewrite <- (cf_idm d k Hk). apply cf_weyl; [exact HQ|exact Hk]. }
  assert (HwEU : 1 - alpha <= mu_min /\ mu_min <= mu_max /\ mu_max <= 1 + alpha).
  { pose proof (HwU (d - 1)%nat ltac:(lia)) as H1. pose proof (HwU O ltac:(lia)) as H2.
    apply Rabs_le_inv in H1. apply Rabs_le_inv in H2.
    pose proof (cf_sorted d QQ O (d - 1)%nat ltac:(lia)). unfold mu_min, mu_max. lra. }
  set (sP := fun k => if lt_dec k d then sqrt (cf_eig n Wt k) else 0).
  set (lH := fun k => if lt_dec k d then cf_eig d H k else 0).
  set (lT := fun k => if lt_dec k d then cf_eig d T k else 0).
  set (la' := fun k => if lt_dec k d then la k else 0).
  set (lb' := fun k => if lt_dec k d then lb k else 0).
  assert (Hostr : forall k, exists th, (mu_min <= th <= mu_max) /\ lH k = th * lT k).
  { intros k. unfold lH, lT. destruct (lt_dec k d) as [Hk|Hk].
    - apply (cf_ostrowski d Q T k HT); [|exact Hk]. fold QQ. fold mu_min. lra.
    - exists mu_min. split; [lra|ring]. }
  assert (Hbr' : forall k, la' k <= lT k <= lb' k).
  { intros k. unfold la', lb', lT. destruct (lt_dec k d) as [Hk|Hk]; [apply Hbr, Hk|lra]. }
  assert (Hbeta0 : 0 <= beta) by (destruct HM; assumption).
  assert (He0 : 0 <= e) by (destruct HE; assumption).
  assert (Ha0 : 0 <= a) by (destruct HA; assumption). assert (Hb0 : 0 <= b) by (destruct HB; assumption).
  assert (Hw : forall k, Rabs (sP k ^ 2 - lH k) <= e + (beta + eps)).
  { intros k. unfold sP, lH. destruct (lt_dec k d) as [Hk|Hk]; [|simpl; rewrite Rmult_0_l, Rminus_0_r, Rabs_R0; nra].
    rewrite pow2_sqrt by exact (cf_gram_psd n m (mtr (mmul d A (mtr B))) k ltac:(lia)).
    pose proof (lemma_11_2_congruence cf_eig cf_weyl_h cf_gram_swap m n d A B L a b k Hm Hn Hk HA HB) as Hcg.
    fold Wt M' in Hcg.
    assert (HMH : Rabs (cf_eig d M' k - cf_eig d H k) <= e + beta).
    { apply cf_weyl; [|exact Hk].
      apply (opbound_ext d d (fun p q => (Mh p q - H p q) + (-1) * (Mh p q - M' p q))); [intros; ring|].
      apply opbound_add; [exact HE|].
      replace beta with (Rabs (-1) * beta) by (rewrite Rabs_left by lra; ring). apply opbound_scal, HM. }
    replace (cf_eig n Wt k - cf_eig d H k) with ((cf_eig n Wt k - cf_eig d M' k) + (cf_eig d M' k - cf_eig d H k)) by ring.
    eapply Rle_trans; [apply Rabs_triang|]. lra. }
  assert (HsP0 : forall k, 0 <= sP k) by (intros k; unfold sP; destruct (lt_dec k d); [apply sqrt_pos|lra]).
  pose proof (theorem_gt_float sP (fun k => sP k ^ 2) lH lT la' lb' mu_min mu_max alpha (beta + eps) e
                HsP0 (fun k => eq_refl) HwEU Hostr Hbr' Hw alpha (beta + eps) e ltac:(lra) ltac:(lra) ltac:(lra)
                c grow shrink ltac:(lra) Hg Hs i) as Hf.
  destruct (g_ends_ext la' la c grow shrink i) as [E1 _]; [unfold la'; destruct (lt_dec i d); [reflexivity|lia]|].
  destruct (g_ends_ext lb' lb c grow shrink i) as [_ E2]; [unfold lb'; destruct (lt_dec i d); [reflexivity|lia]|].
  rewrite E1, E2 in Hf. unfold sP in Hf. destruct (lt_dec i d); [|lia]. exact Hf.
Qed.
