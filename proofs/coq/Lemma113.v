(** * Lemma 11.3: Lemma 11.2 with Theorem G-T (the d x d core without eigenvectors)

    Backs [proofs/enclosure.md] §11 Lemma 11.3 (its matrix statement and
    proof: Lemma 11.2's congruence steps (a), (b) with Theorem G-T in step
    (c)); code: [product._theorem_gt_ends] (the [d >= THEOREM_GT_MIN_INNER]
    branch of [product._certify_stack_theorem_g]), whose floats
    [alpha] ([_stacked.gram_deviation_upper] on the [dorgqr] factor),
    [e] ([_stacked.tridiagonal_residual_norm_upper]), the brackets
    ([_stacked.tridiagonal_eigenvalue_brackets]), [beta], [eps] and
    [c = up(up(beta + e) + eps)] are its premises; the second part proves
    the float evaluation of [e] ([tridiagonal_residual_norm_upper_float]).

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

(** ** [e_T]: [_stacked.tridiagonal_residual_norm_upper] (Lemma 11.3's
    residual with a tridiagonal middle)

    For floats [W] ([m x m]), [X] ([m x r]), [d], [e]
    ([T = tridiag(e, d, e)]): [Y = fl(X T)] with each entry ANY evaluation of
    its (at most 3) pairs ([tri_pairs]: the terms that exist), [P = fl(Y X^T)]
    ANY classical product (inner [r], either orientation), [R_hat = fl(W -
    P)]; [nR >= ||R_hat||_2, || |R_hat| ||_2] ([norm2_upper]),
    [nT >= ||N_T||_2], [N_T = |X||T||X|^T], [maxrow >= max_j sum_l |x_jl|],
    [g >= gamma_(r+3)]: the code's [out = up(up(main + apriori) + under)]
    bounds [||W - X T X^T||_2] (entrywise: [|R - R_hat| <= u|R_hat| +
    gamma_(r+3) N_T + (r + 6 maxrow) eta], [ResidualEntry.chunk_entry_error]
    with the middle's [quad_ok 3 (3 eta)], [v_entry_dot]). *)

From Coq Require Import List Permutation.
From Certbound Require Import FPModel Summation DotProduct OneStep ResidualEntry.
Import ListNotations.
Local Notation succ := (Flocq.Core.Ulp.succ radix2 fexp).

Definition tri_pairs (r : nat) (d e x : nat -> R) (l : nat) : list (R * R) :=
  (x l, d l) :: (match l with O => [] | S k => [(x k, e k)] end) ++ (if lt_dec (S l) r then [(x (S l), e l)] else []).

Lemma trim_col_expand : forall r d e (x : nat -> R) l, (l < r)%nat ->
  rsum r (fun k => x k * trim d e k l)
    = x l * d l + (match l with O => 0 | S k => x k * e k end) + (if lt_dec (S l) r then x (S l) * e l else 0).
Proof.
  intros r d e x l Hl.
  rewrite (rsum_ext r _ (fun k => (if Nat.eq_dec k l then x l * d l else 0)
                                 + (match l with O => 0 | S k' => if Nat.eq_dec k k' then x k' * e k' else 0 end)
                                 + (if Nat.eq_dec k (S l) then x (S l) * e l else 0))).
  - rewrite !rsum_add, !rsum_point. destruct (lt_dec l r); [|lia].
    destruct l as [|k]; [rewrite rsum_zero; ring|]. rewrite rsum_point. destruct (lt_dec k r); [ring|lia].
  - intros k Hk. unfold trim.
    destruct (Nat.eq_dec k l) as [->|H1].
    + destruct l as [|k']; [destruct (Nat.eq_dec 0 1); [lia|ring]|].
      destruct (Nat.eq_dec (S k') k'); [lia|]. destruct (Nat.eq_dec (S k') (S (S k'))); [lia|ring].
    + destruct (Nat.eq_dec (S k) l) as [<-|H2].
      * destruct (Nat.eq_dec k k); [|lia]. destruct (Nat.eq_dec k (S (S k))); [lia|ring].
      * destruct (Nat.eq_dec (S l) k) as [<-|H3].
        -- destruct (Nat.eq_dec (S l) (S l)); [|lia]. destruct l as [|k']; [ring|].
           destruct (Nat.eq_dec (S (S k')) k'); [lia|ring].
        -- destruct (Nat.eq_dec k (S l)); [lia|]. destruct l as [|k']; [ring|].
           destruct (Nat.eq_dec k k'); [lia|ring].
Qed.

Lemma trim_abs : forall d e k l, Rabs (trim d e k l) = trim (fun i => Rabs (d i)) (fun i => Rabs (e i)) k l.
Proof.
  intros. unfold trim. destruct (Nat.eq_dec k l); [reflexivity|]. destruct (Nat.eq_dec (S k) l); [reflexivity|].
  destruct (Nat.eq_dec (S l) k); [reflexivity|]. apply Rabs_R0.
Qed.

Lemma tri_pairs_dot : forall r d e (X : nat -> nat -> R) i l, (l < r)%nat ->
  dot (tri_pairs r d e (X i) l) = mmul r X (trim d e) i l /\
  absdot (tri_pairs r d e (X i) l) = mmul r (mabs X) (mabs (trim d e)) i l.
Proof.
  intros r d e X i l Hl. unfold mmul. split.
  - rewrite (trim_col_expand r d e (X i) l Hl). unfold tri_pairs, dot.
    destruct l as [|k]; destruct (lt_dec _ r); simpl; unfold lsum; simpl; ring.
  - unfold mabs. rewrite (rsum_ext r _ (fun k => Rabs (X i k) * trim (fun i => Rabs (d i)) (fun i => Rabs (e i)) k l))
      by (intros; rewrite trim_abs; reflexivity).
    rewrite (trim_col_expand r _ _ (fun k => Rabs (X i k)) l Hl). unfold tri_pairs, absdot.
    destruct l as [|k]; destruct (lt_dec _ r); simpl; unfold lsum; simpl; ring.
Qed.

Lemma tri_pairs_length : forall r d e x l, (length (tri_pairs r d e x l) <= 3)%nat.
Proof. intros. unfold tri_pairs. destruct l; destruct (lt_dec _ r); simpl; lia. Qed.

Theorem tridiagonal_residual_norm_upper_float : forall m r (W X Y Rh Pm : nat -> nat -> R) (d e : nat -> R)
    (tY tP : nat -> nat -> dtree) nR nT maxrow g,
  INR (r + 3) * u <= / 2 ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> format (W i j)) ->
  (forall i l, (i < m)%nat -> (l < r)%nat ->
     Permutation (dpairs (tY i l)) (tri_pairs r d e (X i) l) /\ Y i l = dfl (tY i l)) ->
  (forall i j, (i < m)%nat -> (j < m)%nat ->
     (Permutation (dpairs (tP i j)) (map (fun l => (Y i l, X j l)) (seq 0 r)) \/
      Permutation (dpairs (tP i j)) (map (fun l => (X j l, Y i l)) (seq 0 r))) /\ Pm i j = dfl (tP i j)) ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> Rh i j = fl (W i j - Pm i j)) ->
  opbound m m Rh nR -> opbound m m (mabs Rh) nR ->
  opbound m m (mmul r (mmul r (mabs X) (mabs (trim d e))) (mtr (mabs X))) nT ->
  (forall j, (j < m)%nat -> rsum r (fun l => Rabs (X j l)) <= maxrow) -> 0 <= maxrow ->
  gamma (r + 3) <= g ->
  let kappa := succ (fl (2 * INR r + succ (fl (12 * maxrow)))) in
  let under := succ (fl (succ (fl (kappa * eta)) * succ (fl (sqrt (INR m * INR m))))) in
  opbound m m (fun i j => W i j - mmul r (mmul r X (trim d e)) (mtr X) i j)
    (succ (fl (succ (fl (succ (fl ((1 + 2 * u) * nR)) + succ (fl (g * nT)))) + under))).
Proof.
  intros m r W X Y Rh Pm d e tY tP nR nT maxrow g Hr HW HY HP HR HnR HanR HnT Hmax Hmax0 Hg kappa under.
  pose proof u_pos. pose proof eta_pos. pose proof u_lt_1.
  assert (Hg0 : 0 <= gamma (r + 3)) by (apply gamma_nonneg; lra).
  assert (HnR0 : 0 <= nR) by (destruct HnR; assumption). assert (HnT0 : 0 <= nT) by (destruct HnT; assumption).
  set (N := mmul r (mmul r (mabs X) (mabs (trim d e))) (mtr (mabs X))).
  set (kap := (INR r + 6 * maxrow) * eta).
  assert (Hent : forall i j, (i < m)%nat -> (j < m)%nat ->
    Rabs ((W i j - mmul r (mmul r X (trim d e)) (mtr X) i j) - Rh i j) <= u * mabs Rh i j + gamma (r + 3) * N i j + kap).
  { intros i j Hi Hj. destruct (HP i j Hi Hj) as [Hpp EP].
    set (qs := map (fun l => (X j l, Y i l, mmul r X (trim d e) i l, mmul r (mabs X) (mabs (trim d e)) i l)) (seq 0 r)).
    assert (Hxv : map xv qs = map (fun l => (X j l, Y i l)) (seq 0 r)) by (unfold qs; rewrite map_map; reflexivity).
    assert (Hlen : length qs = r) by (unfold qs; rewrite map_length, seq_length; reflexivity).
    assert (Ht : exists t, Permutation (dpairs t) (map xv qs) /\ dfl t = Pm i j).
    { rewrite Hxv, EP. destruct Hpp as [P1|P2].
      - exists (dswap (tP i j)). destruct (dswap_mirror (tP i j)) as [E1 E2]. split; [|exact E1]. rewrite E2.
        apply (Permutation_map (fun p => (snd p, fst p))) in P1. rewrite map_map in P1. simpl in P1. exact P1.
      - exists (tP i j). split; [exact P2|reflexivity]. }
    destruct Ht as (t & Ht & Eft).
    assert (Hq : forall q, In q qs -> quad_ok 3 (3 * eta) q).
    { intros q Hin. unfold qs in Hin. apply in_map_iff in Hin as (l & <- & Hl). apply in_seq0 in Hl.
      destruct (HY i l Hi Hl) as [Pl El]. destruct (tri_pairs_dot r d e X i l Hl) as [D1 D2].
      rewrite El, <- D1, <- D2. apply v_entry_dot; [exact Pl|apply tri_pairs_length]. }
    assert (Hr' : INR (length qs + 3) * u <= / 2) by (rewrite Hlen; exact Hr).
    assert (He3 : 0 <= 3 * eta) by lra.
    pose proof (chunk_entry_error qs t 3 (3 * eta) Ht Hr' He3 Hq) as Hce.
    assert (Hlq : @length quad qs = r) by exact Hlen. rewrite Hlq, Eft in Hce.
    assert (E3 : lsum (map xw qs) = mmul r (mmul r X (trim d e)) (mtr X) i j).
    { unfold qs. rewrite map_map, lsum_map_seq. unfold mmul, mtr. apply rsum_ext. intros; simpl; ring. }
    assert (A3 : lsum (map xa qs) = N i j).
    { unfold qs, N. rewrite map_map, lsum_map_seq. unfold mmul, mtr. apply rsum_ext. intros; simpl.
      unfold mabs. ring. }
    assert (AX : lsum (map ax qs) = rsum r (fun l => Rabs (X j l))).
    { unfold qs. rewrite map_map, lsum_map_seq. apply rsum_ext. intros; reflexivity. }
    rewrite E3, A3, AX in Hce.
    assert (Hf : format (Pm i j)) by (rewrite EP; apply dfl_format).
    pose proof (fl_sub_error_computed_u (W i j) (Pm i j) (HW i j Hi Hj) Hf) as Hs.
    rewrite <- HR in Hs by assumption. fold (mabs Rh i j) in Hs. unfold mabs in Hs |- *.
    pose proof (Hmax j Hj).
    replace (W i j - mmul r (mmul r X (trim d e)) (mtr X) i j - Rh i j)
      with ((W i j - Pm i j - Rh i j) + (Pm i j - mmul r (mmul r X (trim d e)) (mtr X) i j)) by ring.
    eapply Rle_trans; [apply Rabs_triang|]. unfold kap.
    assert (0 <= rsum r (fun l => Rabs (X j l))) by (apply rsum_nonneg; intros; apply Rabs_pos).
    assert (2 * (3 * eta) * rsum r (fun l => Rabs (X j l)) <= 6 * maxrow * eta) by nra.
    lra. }
  assert (Hn : opbound m m (fun i j => W i j - mmul r (mmul r X (trim d e)) (mtr X) i j)
                 (nR + rsum 1 (fun _ => u * nR) + gamma (r + 3) * nT + kap * sqrt (INR m * INR m))).
  { apply (entrywise_assembly m m _ Rh nR 1 (fun _ => u) (fun _ => Rh) (fun _ => nR) (gamma (r + 3)) N nT kap); try assumption.
    - intros; lra.
    - intros t Ht. exact HanR.
    - intros i j _ _. unfold N, mmul, mtr, mabs. apply rsum_nonneg. intros l _. apply Rmult_le_pos; [|apply Rabs_pos].
      apply rsum_nonneg. intros; apply Rmult_le_pos; apply Rabs_pos.
    - unfold kap. apply Rmult_le_pos; [pose proof (pos_INR r); lra|lra].
    - intros i j Hi Hj. simpl. pose proof (Hent i j Hi Hj). unfold mabs in *. lra. }
  apply (opbound_weaken _ _ _ _ _ Hn). simpl.
  assert (Hk : kap <= succ (fl (kappa * eta))).
  { apply step_up. unfold kap, kappa. apply Rmult_le_compat_r; [lra|].
    assert (12 * maxrow <= succ (fl (12 * maxrow))) by (apply step_up; lra).
    assert (2 * INR r + 12 * maxrow <= succ (fl (2 * INR r + succ (fl (12 * maxrow))))) by (apply step_up; lra).
    pose proof (pos_INR r). lra. }
  assert (Hu2 : kap * sqrt (INR m * INR m) <= under).
  { unfold under. apply up_mul; [split; [unfold kap; pose proof (pos_INR r); nra|exact Hk]|].
    split; [apply sqrt_pos|apply step_up; lra]. }
  apply up_add; [|exact Hu2]. apply up_add.
  - apply step_up. nra.
  - apply up_mul; lra.
Qed.
