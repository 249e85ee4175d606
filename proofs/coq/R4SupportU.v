(** * Lemma R.4's support step for the session-8 [Q_j = I - Vbar_j Ubar_j^T]
    ([proofs/enclosure-reconstruct.md] §4; [reconstruct._reconstruct])

    As [R4Support.v], with the two factors [V_j], [U_j = U~_j] (both with a
    zero first row: the code writes [U~]'s local row 0 as 0): replacing the
    trailing block of the iterate by Lemma R.3's float result gives
    [X_new - Q_j X Q_j^T = embed(X' - Q' Xt Q'^T)], [Q' = I - V U^T]
    ([r4_support_entry_u]), the same norm bound ([r4_support_u]), and with
    [TheoremGRU.lemma_r3_u] one block's [D_j <= Delta_j] from the trailing
    block's floats ([gr_block_bound_u]). *)

From Coq Require Import Reals Psatz.
From Certbound Require Import NormBounds Lemma112 CourantFischer TheoremGR R4Support TheoremGRU.
Open Scope R_scope.

Section SupportU.
Variables (s n b : nat) (V U X Xp : nat -> nat -> R).
Hypothesis V_row0 : forall l, V O l = 0.
Hypothesis U_row0 : forall l, U O l = 0.
Hypothesis X_split1 : forall a d, (a < s)%nat -> (s < d)%nat -> X a d = 0.
Hypothesis X_split2 : forall a d, (a < s)%nat -> (s < d)%nat -> X d a = 0.

Let k := (s + n)%nat.
Let P := mmul b (vbar s V) (mtr (vbar s U)).
Let Pn := mmul b V (mtr U).
Let Qk := fun a c => idm a c - P a c.
Let Qn := fun a c => idm a c - Pn a c.
Let Xt := fun c d => X (s + c)%nat (s + d)%nat.

Lemma vbar_low_u : forall (W : nat -> nat -> R) a l, (forall l, W O l = 0) -> (a <= s)%nat -> vbar s W a l = 0.
Proof.
  intros W a l HW Ha. unfold vbar. destruct (le_lt_dec s a); [replace (a - s)%nat with O by lia; apply HW|reflexivity].
Qed.

Lemma P_low_u : forall a c, (a <= s)%nat -> P a c = 0.
Proof. intros a c Ha. unfold P, mmul. apply rsum_support0. intros l _. rewrite (vbar_low_u V) by assumption. ring. Qed.

Lemma P_low_r_u : forall a c, (c <= s)%nat -> P a c = 0.
Proof. intros a c Hc. unfold P, mmul, mtr. apply rsum_support0. intros l _. rewrite (vbar_low_u U) by assumption. ring. Qed.

Lemma P_shift_u : forall c d, P (s + c)%nat (s + d)%nat = Pn c d.
Proof.
  intros c d. unfold P, Pn, mmul, mtr, vbar. apply rsum_ext. intros l _.
  destruct (le_lt_dec s (s + c)); [|lia]. destruct (le_lt_dec s (s + d)); [|lia].
  replace (s + c - s)%nat with c by lia. replace (s + d - s)%nat with d by lia. reflexivity.
Qed.

Lemma QY_u : forall (Y : nat -> nat -> R) a d, (a < k)%nat -> mmul k Qk Y a d = Y a d - mmul k P Y a d.
Proof. intros Y a d Ha. unfold Qk. rewrite mmul_sub_l, mmul_idm_l by exact Ha. reflexivity. Qed.

Lemma PY_low_u : forall (Y : nat -> nat -> R) a d, (a <= s)%nat -> mmul k P Y a d = 0.
Proof. intros Y a d Ha. unfold mmul at 1. apply rsum_support0. intros e _. rewrite P_low_u by exact Ha. ring. Qed.

Lemma PY_shift_u : forall (Y : nat -> nat -> R) c d,
  mmul k P Y (s + c)%nat d = rsum n (fun e => Pn c e * Y (s + e)%nat d).
Proof.
  intros Y c d. unfold mmul at 1. unfold k. rewrite rsum_split.
  rewrite (rsum_support0 s); [rewrite Rplus_0_l|intros e He; rewrite P_low_r_u by lia; ring].
  apply rsum_ext. intros e _. rewrite P_shift_u. reflexivity.
Qed.

Lemma AQt_g : forall m (Pm A : nat -> nat -> R) a c, (c < m)%nat ->
  mmul m A (mtr (fun a c => idm a c - Pm a c)) a c = A a c - rsum m (fun e => A a e * Pm c e).
Proof.
  intros m Pm A a c Hc. unfold mmul at 1, mtr.
  rewrite (rsum_ext m _ (fun e => A a e * idm c e - A a e * Pm c e)) by (intros; ring).
  rewrite rsum_sub. f_equal. rewrite (rsum_support1 m _ c Hc).
  - unfold idm. destruct (Nat.eq_dec c c); [ring|lia].
  - intros r _ Hr. unfold idm. destruct (Nat.eq_dec c r); [lia|ring].
Qed.

Theorem r4_support_entry_u : forall a c, (a < k)%nat -> (c < k)%nat ->
  xnew s X Xp a c - mmul k (mmul k Qk X) (mtr Qk) a c
    = embed s (fun p q => Xp p q - mmul n (mmul n Qn Xt) (mtr Qn) p q) a c.
Proof.
  intros a c Ha Hc. unfold Qk at 2. rewrite AQt_g by exact Hc. rewrite QY_u by exact Ha.
  unfold xnew, embed. destruct (le_lt_dec s a) as [Hsa|Hsa]; destruct (le_lt_dec s c) as [Hsc|Hsc].
  - remember (a - s)%nat as a' eqn:Ea. remember (c - s)%nat as c' eqn:Ec.
    assert (E1 : a = (s + a')%nat) by lia. assert (E2 : c = (s + c')%nat) by lia. subst a c.
    assert (Ha' : (a' < n)%nat) by (unfold k in Ha; lia). assert (Hc' : (c' < n)%nat) by (unfold k in Hc; lia).
    unfold Qn. rewrite AQt_g by exact Hc'. rewrite QY_gen by exact Ha'. fold Pn.
    rewrite PY_shift_u.
    unfold k at 1. rewrite rsum_split.
    rewrite (rsum_support0 s); [rewrite Rplus_0_l|intros e He; rewrite P_low_r_u by lia; ring].
    assert (Hs : forall e', (e' < n)%nat ->
      mmul k Qk X (s + a')%nat (s + e')%nat * P (s + c')%nat (s + e')%nat
      = mmul n (fun a0 c0 => idm a0 c0 - Pn a0 c0) Xt a' e' * Pn c' e').
    { intros e' He'. rewrite QY_u by (unfold k; lia). rewrite QY_gen by exact Ha'. rewrite PY_shift_u.
      rewrite P_shift_u. reflexivity. }
    rewrite (rsum_ext n _ _ Hs). reflexivity.
  - rewrite (rsum_support0 k); [|intros e He; rewrite P_low_u by lia; ring].
    unfold mmul at 1. rewrite (rsum_support0 k); [ring|]. intros e He.
    destruct (le_lt_dec e s) as [Hes|Hes]; [rewrite P_low_r_u by exact Hes; ring|].
    rewrite X_split2 by lia. ring.
  - rewrite PY_low_u by lia. rewrite (rsum_support0 k); [ring|]. intros e He.
    rewrite QY_u by exact Ha. rewrite PY_low_u by lia.
    destruct (le_lt_dec e s) as [Hes|Hes]; [rewrite P_low_r_u by exact Hes; ring|].
    rewrite X_split1 by lia. ring.
  - rewrite (rsum_support0 k); [|intros e He; rewrite P_low_u by lia; ring].
    rewrite PY_low_u by lia. ring.
Qed.

Theorem r4_support_u : forall dl,
  opbound n n (fun p q => Xp p q - mmul n (mmul n Qn Xt) (mtr Qn) p q) dl ->
  opbound k k (fun a c => xnew s X Xp a c - mmul k (mmul k Qk X) (mtr Qk) a c) dl.
Proof.
  intros dl H. apply (opbound_ext k k (embed s (fun p q => Xp p q - mmul n (mmul n Qn Xt) (mtr Qn) p q))).
  - intros a c Ha Hc. symmetry. apply r4_support_entry_u; assumption.
  - apply embed_opbound, H.
Qed.

End SupportU.

(** One block on the whole matrix, session-8 form: Lemma R.3 ([lemma_r3_u])
    on the trailing block and the support step. *)
Theorem gr_block_bound_u : forall s n b (V U X Xp Y M H W : nat -> nat -> R) nu eps eY eM eH eW e5,
  (forall l, V O l = 0) -> (forall l, U O l = 0) ->
  (forall a d, (a < s)%nat -> (s < d)%nat -> X a d = 0) ->
  (forall a d, (a < s)%nat -> (s < d)%nat -> X d a = 0) ->
  (forall i j, X i j = X j i) ->
  let Xt := fun c d => X (s + c)%nat (s + d)%nat in
  let Qn := msub idm (mmul b V (mtr U)) in
  opbound n b V nu ->
  opbound n n (fun a c => mmul n (mtr Qn) Qn a c - idm a c) eps -> 0 <= eps ->
  opbound n b (msub Y (mmul n Xt U)) eY ->
  opbound b b (msub M (mmul n (mtr U) Y)) eM ->
  opbound n b (msub H (mmul b V M)) eH ->
  opbound n b (msub W (msub Y (mscal (/ 2) H))) eW ->
  opbound n n (msub Xp (msub (msub Xt (mmul b V (mtr W))) (mmul b W (mtr V)))) e5 ->
  opbound (s + n) (s + n)
    (fun a c => xnew s X Xp a c
                - mmul (s + n) (mmul (s + n) (fun a0 c0 => idm a0 c0 - mmul b (vbar s V) (mtr (vbar s U)) a0 c0) X)
                    (mtr (fun a0 c0 => idm a0 c0 - mmul b (vbar s V) (mtr (vbar s U)) a0 c0)) a c)
    (e5 + 2 * nu * (/ 2 * (1 + sqrt (1 + eps)) * eY + / 2 * nu * eM + / 2 * eH + eW)).
Proof.
  intros s n b V U X Xp Y M H W nu eps eY eM eH eW e5 HV0 HU0 HX1 HX2 HXs Xt Qn HV HQ He HY HM HH HW H5.
  apply (r4_support_u s n b V U X Xp HV0 HU0 HX1 HX2).
  exact (lemma_r3_u n b Xt V U Y M H W Xp (fun i j => HXs (s + i)%nat (s + j)%nat)
           nu eps eY eM eH eW e5 HV HQ HY HM HH HW H5 He).
Qed.
