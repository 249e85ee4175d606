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
From Certbound Require Import NormBounds Lemma112 CourantFischer TheoremGR R4Support TheoremGRU FPModel Summation OneStep GRTable.
From Flocq Require Import Core.
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

Local Notation succ := (Ulp.succ radix2 fexp).

(** ** One block from the evaluation model, session-8 form

    [GRTable.gr_block_float] for [Q_j = I - V_j U~_j^T]: the code's floats
    [Y = fl(X~ U~)], [M = fl(U~^T Y)] (row chunks over the [kp] padded rows,
    [U~]'s rows [>= n] zero), [H^T = fl(M^T V^T)], [W], [X'] computed by ANY
    evaluation of each entry, the helpers' norms, Lemma R.1′'s [nu], [eps]:
    [_bounds]' [delta] (with its [_up] on the [eta] terms) bounds
    [||X_new - Q_j X Q_j^T||_2] on the whole iterate. *)
Lemma up_mono : forall y z, y <= z -> Ulp.succ radix2 fexp (fl y) <= Ulp.succ radix2 fexp (fl z).
Proof. intros y z H. apply succ_le; [auto with typeclass_instances|apply fl_format|apply fl_format|apply fl_le, H]. Qed.

Lemma le_succ_fl : forall x, fl x <= Ulp.succ radix2 fexp (fl x).
Proof. intros x. apply succ_ge_id. Qed.

Theorem gr_block_float_u : forall s n b kp (V U X Y M Ht W Xp : nat -> nat -> R)
    hY hM hH h5 gY gM gb g5 aU aV vm phi yF wF nuf epsf rt,
  (forall l, V O l = 0) -> (forall l, U O l = 0) -> (forall r l, (n <= r < kp)%nat -> (l < b)%nat -> U r l = 0) ->
  (forall a d, (a < s)%nat -> (s < d)%nat -> X a d = 0) ->
  (forall a d, (a < s)%nat -> (s < d)%nat -> X d a = 0) ->
  (forall i j, X i j = X j i) ->
  let Xt := fun c d => X (s + c)%nat (s + d)%nat in
  let Qn := msub idm (mmul b V (mtr U)) in
  (forall i l, (i < n)%nat -> (l < b)%nat -> bounded_eval hY n (pairs_of n Xt U i l) (Y i l)) ->
  (forall l l', (l < b)%nat -> (l' < b)%nat -> bounded_eval hM kp (pairs_of kp (mtr U) Y l l') (M l l')) ->
  (forall l i, (l < b)%nat -> (i < n)%nat -> bounded_eval hH b (pairs_of b (mtr M) (mtr V) l i) (Ht l i)) ->
  (forall i l, (i < n)%nat -> (l < b)%nat ->
     format (Y i l) /\ format (Ht l i) /\ W i l = fl (Y i l - fl (Ht l i * / 2))) ->
  (forall i j, (i < n)%nat -> (j < n)%nat ->
     bounded_eval h5 (2 * b + 1) (syr2k_pairs b Xt V W i j) (Xp i j) \/
     bounded_eval h5 (2 * b + 1) (syr2k_pairs b Xt V W j i) (Xp i j)) ->
  INR hY * u <= / 2 -> gamma hY <= gY -> INR hM * u <= / 2 -> gamma hM <= gM ->
  INR hH * u <= / 2 -> gamma hH <= gb -> INR h5 * u <= / 2 -> gamma h5 <= g5 ->
  opbound n b (mabs U) aU -> opbound n b (mabs V) aV -> opbound n b (mmul b (mabs V) (mabs M)) vm ->
  opbound n n (mabs Xt) phi -> opbound n b (mabs Y) yF -> opbound n b (mabs W) wF ->
  opbound n b V nuf -> opbound n n (fun a c => mmul n (mtr Qn) Qn a c - idm a c) epsf -> 0 <= epsf ->
  (1 <= b)%nat -> (1 <= n)%nat -> (n <= kp)%nat ->
  4 * INR b + 2 <= 2 ^ 40 -> 4 * INR n <= 2 ^ 40 -> 4 * INR kp <= 2 ^ 40 -> INR (4 * kp) * INR b <= 2 ^ 40 ->
  (4 * INR b + 2) * INR n <= 2 ^ 40 -> sqrt (INR n * INR b) <= rt -> 1 <= rt ->
  let eYf := succ (fl (succ (fl (gY * succ (fl (phi * aU)))) + succ (fl (fl (fl (4 * INR n) * eta) * rt)))) in
  let eMf := succ (fl (succ (fl (gM * succ (fl (aU * yF)))) + fl (fl (fl (4 * INR kp) * eta) * INR b))) in
  let eHf := succ (fl (succ (fl (gb * vm)) + succ (fl (fl (fl (2 * INR b) * eta) * rt)))) in
  let eWf := succ (fl (succ (fl (2 * u * wF)) + succ (fl (eta * rt)))) in
  let e5f := succ (fl (succ (fl (g5 * succ (fl (phi + succ (fl (2 * succ (fl (aV * wF))))))))
                       + fl (fl (fl (fl (4 * INR b) + 2) * eta) * INR n))) in
  let hq := succ (fl (/ 2 * succ (fl (1 + succ (fl (sqrt (succ (fl (1 + epsf))))))))) in
  let inner := succ (fl (succ (fl (succ (fl (hq * eYf)) + succ (fl (/ 2 * succ (fl (nuf * eMf))))))
                         + succ (fl (succ (fl (/ 2 * eHf)) + eWf)))) in
  opbound (s + n) (s + n)
    (fun a c => xnew s X Xp a c
                - mmul (s + n) (mmul (s + n) (fun a0 c0 => idm a0 c0 - mmul b (vbar s V) (mtr (vbar s U)) a0 c0) X)
                    (mtr (fun a0 c0 => idm a0 c0 - mmul b (vbar s V) (mtr (vbar s U)) a0 c0)) a c)
    (succ (fl (e5f + succ (fl (2 * succ (fl (nuf * inner))))))).
Proof.
  intros s n b kp V U X Y M Ht W Xp hY hM hH h5 gY gM gb g5 aU aV vm phi yF wF nuf epsf rt
    HV0 HU0 HUp HX1 HX2 HXs Xt Qn HY HM HH HW H5 HuY HgY HuM HgM HuH HgH Hu5 Hg5
    HaU HaV Hvm Hphi HyF HwF Hnu Heps Heps0 Hb1 Hn1 Hkp Hb Hn Hk Hkb Hbn Hrt Hrt1 eYf eMf eHf eWf e5f hq inner.
  pose proof (pos_INR b) as Hb0.
  assert (Hb4 : 4 * INR b <= 2 ^ 40) by lra. assert (Hb2 : 2 * INR b <= 2 ^ 40) by lra.
  assert (EY : opbound n b (msub Y (mmul n Xt U)) eYf).
  { eapply opbound_weaken; [apply (gr_eY_float n b Xt U Y hY gY phi aU rt); assumption|].
    apply up_mono. apply Rplus_le_compat_l. apply le_succ_fl. }
  assert (EM : opbound b b (msub M (mmul n (mtr U) Y)) eMf)
    by (apply (gr_eZ_float n kp b U Y M hM gM aU yF); assumption).
  assert (EH : opbound n b (msub (mtr Ht) (mmul b V M)) eHf).
  { eapply opbound_weaken; [apply (gr_eH_float n b V M Ht hH gb vm rt); assumption|].
    apply up_mono. apply Rplus_le_compat_l. apply le_succ_fl. }
  assert (EW : opbound n b (msub W (msub Y (mscal (/ 2) (mtr Ht)))) eWf).
  { eapply opbound_weaken; [apply (gr_eW_float n b Y (mtr Ht) W wF rt); [|assumption..]; intros i l Hi Hl; exact (HW i l Hi Hl)|].
    apply up_mono. apply Rplus_le_compat_l. apply le_succ_fl. }
  assert (E5 : opbound n n (msub Xp (msub (msub Xt (mmul b V (mtr W))) (mmul b W (mtr V)))) e5f)
    by (apply (gr_e5_float n b Xt V W Xp h5 g5 phi aV wF); try assumption; intros i j; apply HXs).
  pose proof (gr_block_bound_u s n b V U X Xp Y M (mtr Ht) W nuf epsf eYf eMf eHf eWf e5f
                HV0 HU0 HX1 HX2 HXs Hnu Heps Heps0 EY EM EH EW E5) as HB.
  apply (opbound_weaken _ _ _ _ _ HB).
  destruct EY as [HY0 _], EM as [HM0 _], EH as [HH0 _], EW as [HW0 _], E5 as [H50 _]. destruct Hnu as [Hnu0 _].
  apply (gr_delta_u_float e5f nuf epsf eYf eMf eHf eWf e5f nuf epsf eYf eMf eHf eWf); lra.
Qed.
