(** * Lemma R.4's support step ([proofs/enclosure-reconstruct.md] §4; [reconstruct._reconstruct])

    Block [j] of the reconstruction acts on the trailing [n x n] part
    ([n = k - s], [s = s_j]) of the [k x k] iterate [X]: [V_j] has a zero
    first row (index [s]), [Q_j = I - Vbar T Vbar^T] with [Vbar] the
    embedding of [V] at rows [>= s], and [X] couples no index [< s] with one
    [> s] ([T] is tridiagonal and the iterate differs from [T] only on
    [[s_(j+1), k)^2]).  If the code replaces [X]'s trailing block by the
    float result [X'] of Lemma R.3 ([xnew]), then
    [xnew - Q_j X Q_j^T] is the embedding of [X' - Q' Xt Q'^T]
    ([Q' = I - V T V^T], [Xt] the trailing block; [r4_support_entry]) and
    has the same norm bound ([r4_support]): Lemma R.4's [D_j] is bounded by
    Lemma R.3's [Delta_j] for the trailing block ([gr_block_bound], with
    [TheoremGR.lemma_r3]). *)

From Coq Require Import Reals Psatz.
From Certbound Require Import NormBounds Lemma112 CourantFischer TheoremGR.
Open Scope R_scope.

Lemma rsum_split : forall s n f, rsum (s + n) f = rsum s f + rsum n (fun c => f (s + c)%nat).
Proof.
  intros s n f. induction n as [|n IH]; simpl.
  - rewrite Nat.add_0_r. ring.
  - rewrite Nat.add_succ_r. simpl. rewrite IH. ring.
Qed.

Section Support.
Variables (s n b : nat) (V T X Xp : nat -> nat -> R).
Hypothesis V_row0 : forall l, V O l = 0.
(** [X] couples no index [< s] with one [> s] (true of [T] tridiagonal and
    of every iterate, which differs from [T] only on [[s_(j+1), k)^2]). *)
Hypothesis X_split1 : forall a d, (a < s)%nat -> (s < d)%nat -> X a d = 0.
Hypothesis X_split2 : forall a d, (a < s)%nat -> (s < d)%nat -> X d a = 0.

Let k := (s + n)%nat.
Definition vbar (a l : nat) : R := if le_lt_dec s a then V (a - s)%nat l else 0.
Let Qk := fun a c => idm a c - mmul b (mmul b vbar T) (mtr vbar) a c.
Let Qn := fun a c => idm a c - mmul b (mmul b V T) (mtr V) a c.
Let Xt := fun c d => X (s + c)%nat (s + d)%nat.
Definition xnew (a c : nat) : R :=
  if le_lt_dec s a then if le_lt_dec s c then Xp (a - s)%nat (c - s)%nat else X a c else X a c.
Definition embed (M : nat -> nat -> R) (a c : nat) : R :=
  if le_lt_dec s a then if le_lt_dec s c then M (a - s)%nat (c - s)%nat else 0 else 0.

Lemma vbar_low : forall a l, (a <= s)%nat -> vbar a l = 0.
Proof.
  intros a l Ha. unfold vbar. destruct (le_lt_dec s a); [replace (a - s)%nat with O by lia; apply V_row0|reflexivity].
Qed.

Lemma P_low : forall a c, (a <= s)%nat -> mmul b (mmul b vbar T) (mtr vbar) a c = 0.
Proof.
  intros a c Ha. unfold mmul. apply rsum_support0. intros l _.
  rewrite (rsum_support0 b (fun m => vbar a m * T m l)); [ring|]. intros m _. rewrite vbar_low by exact Ha. ring.
Qed.

Lemma P_low_r : forall a c, (c <= s)%nat -> mmul b (mmul b vbar T) (mtr vbar) a c = 0.
Proof.
  intros a c Hc. unfold mmul, mtr. apply rsum_support0. intros l _. rewrite vbar_low by exact Hc. ring.
Qed.

Lemma P_shift : forall c d, mmul b (mmul b vbar T) (mtr vbar) (s + c)%nat (s + d)%nat = mmul b (mmul b V T) (mtr V) c d.
Proof.
  intros c d. unfold mmul, mtr, vbar. apply rsum_ext. intros l _. f_equal.
  - apply rsum_ext. intros m _. destruct (le_lt_dec s (s + c)); [|lia]. replace (s + c - s)%nat with c by lia. reflexivity.
  - destruct (le_lt_dec s (s + d)); [|lia]. replace (s + d - s)%nat with d by lia. reflexivity.
Qed.

Let P := mmul b (mmul b vbar T) (mtr vbar).
Let Pn := mmul b (mmul b V T) (mtr V).

Lemma QY : forall (Y : nat -> nat -> R) a d, (a < k)%nat -> mmul k Qk Y a d = Y a d - mmul k P Y a d.
Proof. intros Y a d Ha. unfold Qk. rewrite mmul_sub_l, mmul_idm_l by exact Ha. reflexivity. Qed.

Lemma PY_low : forall (Y : nat -> nat -> R) a d, (a <= s)%nat -> mmul k P Y a d = 0.
Proof. intros Y a d Ha. unfold mmul at 1. apply rsum_support0. intros e _. unfold P. rewrite P_low by exact Ha. ring. Qed.

Lemma PY_shift : forall (Y : nat -> nat -> R) c d,
  mmul k P Y (s + c)%nat d = rsum n (fun e => Pn c e * Y (s + e)%nat d).
Proof.
  intros Y c d. unfold mmul at 1. unfold k. rewrite rsum_split.
  rewrite (rsum_support0 s); [rewrite Rplus_0_l|intros e He; unfold P; rewrite P_low_r by lia; ring].
  apply rsum_ext. intros e _. unfold P, Pn. rewrite P_shift. reflexivity.
Qed.

Lemma AQt : forall (A : nat -> nat -> R) a c, (c < k)%nat -> mmul k A (mtr Qk) a c = A a c - rsum k (fun e => A a e * P c e).
Proof.
  intros A a c Hc. unfold mmul, mtr, Qk. fold P.
  rewrite (rsum_ext k _ (fun e => A a e * idm c e - A a e * P c e)) by (intros; ring).
  rewrite rsum_sub. f_equal. rewrite (rsum_support1 k _ c Hc).
  - unfold idm. destruct (Nat.eq_dec c c); [ring|lia].
  - intros r _ Hr. unfold idm. destruct (Nat.eq_dec c r); [lia|ring].
Qed.

Lemma QY_gen : forall m (Pm Y : nat -> nat -> R) a d, (a < m)%nat ->
  mmul m (fun a c => idm a c - Pm a c) Y a d = Y a d - mmul m Pm Y a d.
Proof. intros m Pm Y a d Ha. rewrite mmul_sub_l, mmul_idm_l by exact Ha. reflexivity. Qed.

Lemma AQt_gen : forall m (Pm A : nat -> nat -> R) a c, (c < m)%nat ->
  mmul m A (mtr (fun a c => idm a c - Pm a c)) a c = A a c - rsum m (fun e => A a e * Pm c e).
Proof.
  intros m Pm A a c Hc. unfold mmul at 1, mtr.
  rewrite (rsum_ext m _ (fun e => A a e * idm c e - A a e * Pm c e)) by (intros; ring).
  rewrite rsum_sub. f_equal. rewrite (rsum_support1 m _ c Hc).
  - unfold idm. destruct (Nat.eq_dec c c); [ring|lia].
  - intros r _ Hr. unfold idm. destruct (Nat.eq_dec c r); [lia|ring].
Qed.

Theorem r4_support_entry : forall a c, (a < k)%nat -> (c < k)%nat ->
  xnew a c - mmul k (mmul k Qk X) (mtr Qk) a c = embed (fun p q => Xp p q - mmul n (mmul n Qn Xt) (mtr Qn) p q) a c.
Proof.
  intros a c Ha Hc. rewrite AQt by exact Hc. rewrite QY by exact Ha.
  unfold xnew, embed. destruct (le_lt_dec s a) as [Hsa|Hsa]; destruct (le_lt_dec s c) as [Hsc|Hsc].
  - remember (a - s)%nat as a' eqn:Ea. remember (c - s)%nat as c' eqn:Ec.
    assert (E1 : a = (s + a')%nat) by lia. assert (E2 : c = (s + c')%nat) by lia. subst a c.
    assert (Ha' : (a' < n)%nat) by (unfold k in Ha; lia). assert (Hc' : (c' < n)%nat) by (unfold k in Hc; lia).
    unfold Qn. rewrite AQt_gen by exact Hc'. rewrite QY_gen by exact Ha'. fold Pn.
    rewrite PY_shift.
    unfold k at 1. rewrite rsum_split.
    rewrite (rsum_support0 s); [rewrite Rplus_0_l|intros e He; unfold P; rewrite P_low_r by lia; ring].
    assert (Hs : forall e', (e' < n)%nat ->
      mmul k Qk X (s + a')%nat (s + e')%nat * P (s + c')%nat (s + e')%nat
      = mmul n (fun a0 c0 => idm a0 c0 - Pn a0 c0) Xt a' e' * Pn c' e').
    { intros e' He'. rewrite QY by (unfold k; lia). rewrite QY_gen by exact Ha'. rewrite PY_shift.
      unfold P, Pn. rewrite P_shift. unfold mmul at 3. unfold Xt. reflexivity. }
    rewrite (rsum_ext n _ _ Hs). reflexivity.
  - rewrite (rsum_support0 k); [|intros e He; unfold P; rewrite P_low by lia; ring].
    unfold mmul at 1. rewrite (rsum_support0 k); [ring|]. intros e He.
    destruct (le_lt_dec e s) as [Hes|Hes]; [unfold P; rewrite P_low_r by exact Hes; ring|].
    rewrite X_split2 by lia. ring.
  - rewrite PY_low by lia. rewrite (rsum_support0 k); [ring|]. intros e He.
    rewrite QY by exact Ha. rewrite PY_low by lia.
    destruct (le_lt_dec e s) as [Hes|Hes]; [unfold P; rewrite P_low_r by exact Hes; ring|].
    rewrite X_split1 by lia. ring.
  - rewrite (rsum_support0 k); [|intros e He; unfold P; rewrite P_low by lia; ring].
    rewrite PY_low by lia. ring.
Qed.

Lemma mv_embed_low : forall M y a, (a < s)%nat -> mv k (embed M) y a = 0.
Proof.
  intros M y a Ha. unfold mv. apply rsum_support0. intros e _. unfold embed.
  destruct (le_lt_dec s a); [lia|ring].
Qed.

Lemma mv_embed_shift : forall M y a', mv k (embed M) y (s + a')%nat = mv n M (fun e => y (s + e)%nat) a'.
Proof.
  intros M y a'. unfold mv, k. rewrite rsum_split.
  rewrite (rsum_support0 s); [rewrite Rplus_0_l|intros e He; unfold embed;
    destruct (le_lt_dec s (s + a')); [destruct (le_lt_dec s e); [lia|ring]|lia]].
  apply rsum_ext. intros e _. unfold embed. destruct (le_lt_dec s (s + a')); [|lia].
  destruct (le_lt_dec s (s + e)); [|lia]. replace (s + a' - s)%nat with a' by lia. replace (s + e - s)%nat with e by lia.
  reflexivity.
Qed.

Theorem embed_opbound : forall M c, opbound n n M c -> opbound k k (embed M) c.
Proof.
  intros M c [Hc HM]. split; [exact Hc|]. intros y.
  assert (E1 : nsq k (mv k (embed M) y) = nsq n (mv n M (fun e => y (s + e)%nat))).
  { unfold nsq at 1, k. rewrite rsum_split.
    rewrite (rsum_support0 s); [rewrite Rplus_0_l|intros a Ha; rewrite mv_embed_low by exact Ha; ring].
    unfold nsq. apply rsum_ext. intros a' _. fold k. rewrite mv_embed_shift. reflexivity. }
  assert (E2 : nsq n (fun e => y (s + e)%nat) <= nsq k y).
  { unfold nsq at 2, k. rewrite rsum_split. assert (0 <= rsum s (fun j => y j * y j)) by (apply rsum_nonneg; intros; apply Rle_0_sqr).
    unfold nsq. lra. }
  rewrite E1. eapply Rle_trans; [apply HM|]. apply Rmult_le_compat_l; [apply Rle_0_sqr|exact E2].
Qed.

(** R.4's support step: block [j]'s error on the whole matrix is the
    embedding of Lemma R.3's error on the trailing block, so it has the
    same norm bound. *)
Theorem r4_support : forall dl,
  opbound n n (fun p q => Xp p q - mmul n (mmul n Qn Xt) (mtr Qn) p q) dl ->
  opbound k k (fun a c => xnew a c - mmul k (mmul k Qk X) (mtr Qk) a c) dl.
Proof.
  intros dl H. apply (opbound_ext k k (embed (fun p q => Xp p q - mmul n (mmul n Qn Xt) (mtr Qn) p q))).
  - intros a c Ha Hc. symmetry. apply r4_support_entry; assumption.
  - apply embed_opbound, H.
Qed.

End Support.

From Certbound Require Import TheoremGR.

(** One block on the whole matrix: Lemma R.3 on the trailing block (its
    floats [U, Y, Z, M, H, W, X'] with the error bounds of §3's table) and
    the support step give [||X_new - Q_j X Q_j^T||_2 <= Delta_j]
    ([gr_delta_float]: the code's [delta] is [>=] it). *)
Theorem gr_block_bound : forall s n b (V T X Xp U Y Z M H W : nat -> nat -> R) nu t xi eps eU eY eZ eM eH eW e5,
  (forall l, V O l = 0) ->
  (forall a d, (a < s)%nat -> (s < d)%nat -> X a d = 0) ->
  (forall a d, (a < s)%nat -> (s < d)%nat -> X d a = 0) ->
  (forall i j, X i j = X j i) ->
  let Xt := fun c d => X (s + c)%nat (s + d)%nat in
  let Qn := msub idm (mmul b (mmul b V T) (mtr V)) in
  opbound n b V nu -> opbound b b T t -> opbound n n Xt xi ->
  opbound n n (fun a c => mmul n (mtr Qn) Qn a c - idm a c) eps -> 0 <= eps ->
  opbound n b (msub U (mmul b V (mtr T))) eU ->
  opbound n b (msub Y (mmul n Xt U)) eY ->
  opbound b b (msub Z (mmul n (mtr V) Y)) eZ ->
  opbound b b (msub M (mmul b T Z)) eM ->
  opbound n b (msub H (mmul b V M)) eH ->
  opbound n b (msub W (msub Y (mscal (/ 2) H))) eW ->
  opbound n n (msub Xp (msub (msub Xt (mmul b V (mtr W))) (mmul b W (mtr V)))) e5 ->
  opbound (s + n) (s + n)
    (fun a c => xnew s X Xp a c
                - mmul (s + n) (mmul (s + n) (fun a0 c0 => idm a0 c0 - mmul b (mmul b (vbar s V) T) (mtr (vbar s V)) a0 c0) X)
                    (mtr (fun a0 c0 => idm a0 c0 - mmul b (mmul b (vbar s V) T) (mtr (vbar s V)) a0 c0)) a c)
    (e5 + 2 * nu * (/ 2 * (1 + sqrt (1 + eps)) * (eY + xi * eU) + / 2 * nu * (t * eZ + eM) + / 2 * eH + eW)).
Proof.
  intros s n b V T X Xp U Y Z M H W nu t xi eps eU eY eZ eM eH eW e5 HV0 HX1 HX2 HXs Xt Qn
    HV HT HXt HQ He HU HY HZ HM HH HW H5.
  apply r4_support; [exact HV0|exact HX1|exact HX2|].
  exact (lemma_r3 n b Xt V T U Y Z M H W Xp (fun i j => HXs (s + i)%nat (s + j)%nat)
           nu t xi eps eU eY eZ eM eH eW e5 HV HT HXt HQ HU HY HZ HM HH HW H5 He).
Qed.
