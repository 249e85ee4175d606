(** * Sums and dot products in any evaluation order, with or without FMA

    Backs [proofs/enclosure.md] §2 Lemma 2.1 (dot products), Lemma 2.2 and
    [sum_nonneg_upper] / [sum_nonneg_lower], and [enclosure-tight.md]
    Lemma T1(a); code: [certbound/enclose/fperror.py] ([gamma], [_inflate],
    [sum_nonneg_upper], [sum_nonneg_lower], [_sumsq_upper],
    [matvec_nonneg_upper]).

    "Any order, any blocking" is modelled as an arbitrary binary tree: a
    summation tree has the summands as leaves (in any order: its list of
    leaves is any permutation of the input list) and one rounded addition
    per inner node.  A dot-product tree has the products as leaves and, in
    addition, FMA nodes [fl(a*b + t)] (one rounding). *)

From Coq Require Import Reals Psatz List Permutation Arith.
From Flocq Require Import Core.
From Certbound Require Import FPModel.
Import ListNotations.
Open Scope R_scope.

(** ** Higham's constant [gamma_k = k u / (1 - k u)] ([fperror.gamma]). *)
Definition gamma (k : nat) : R := INR k * u / (1 - INR k * u).

Lemma gamma_nonneg : forall k, INR k * u < 1 -> 0 <= gamma k.
Proof.
  intros k Hk. unfold gamma. apply Rmult_le_pos.
  - apply Rmult_le_pos; [apply pos_INR | left; apply u_pos].
  - left; apply Rinv_0_lt_compat; lra.
Qed.

Lemma gamma_mono : forall k l, (k <= l)%nat -> INR l * u < 1 -> gamma k <= gamma l.
Proof.
  intros k l Hkl Hl. unfold gamma. pose proof u_pos.
  assert (INR k <= INR l) by (apply le_INR; exact Hkl).
  assert (0 <= INR k) by apply pos_INR.
  assert (INR k * u <= INR l * u) by nra.
  unfold Rdiv. apply Rmult_le_compat; [nra | left; apply Rinv_0_lt_compat; nra | nra |].
  apply Rinv_le_contravar; nra.
Qed.

(** Higham's Lemma 3.3 step: [(1+u) gamma_k + u <= gamma_(k+1)]. *)
Lemma gamma_step : forall k, INR (S k) * u < 1 -> (1 + u) * gamma k + u <= gamma (S k).
Proof.
  intros k Hk. unfold gamma. rewrite S_INR in *. pose proof u_pos.
  assert (0 <= INR k) by apply pos_INR.
  assert (Hd : 0 < 1 - INR k * u) by nra.
  assert (Hd' : 0 < 1 - (INR k + 1) * u) by nra.
  apply Rle_trans with ((INR k + 1) * u / (1 - INR k * u)).
  - right. field. lra.
  - unfold Rdiv. apply Rmult_le_compat_l; [nra|]. apply Rinv_le_contravar; nra.
Qed.

Lemma u_le_gamma1 : u <= gamma 1.
Proof.
  unfold gamma. simpl INR. rewrite Rmult_1_l. pose proof u_pos. pose proof u_lt_1.
  apply Rle_trans with (u * / 1); [rewrite Rinv_1; lra|].
  apply Rmult_le_compat_l; [lra|]. apply Rinv_le_contravar; lra.
Qed.

Lemma gamma_le_2ku : forall k, INR k * u <= / 2 -> gamma k <= 2 * (INR k * u).
Proof.
  intros k Hk. unfold gamma. pose proof u_pos. assert (0 <= INR k) by apply pos_INR.
  assert (0 <= INR k * u) by nra. set (z := INR k * u) in *.
  assert (0 < 1 - z) by lra.
  apply Rmult_le_reg_r with (1 - z); [lra|].
  unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. nra.
Qed.

Lemma gamma_small : forall k, INR k * u <= / 4 -> gamma k <= / 2.
Proof. intros k Hk. pose proof (gamma_le_2ku k ltac:(lra)). lra. Qed.

(** ** Summation trees *)
Inductive stree : Type :=
  | SLeaf (x : R)
  | SNode (l r : stree).

Fixpoint sval (t : stree) : R :=
  match t with SLeaf x => x | SNode l r => sval l + sval r end.
Fixpoint sabs (t : stree) : R :=
  match t with SLeaf x => Rabs x | SNode l r => sabs l + sabs r end.
(** The computed value: every inner node is one rounded addition. *)
Fixpoint sfl (t : stree) : R :=
  match t with SLeaf x => x | SNode l r => fl (sfl l + sfl r) end.
Fixpoint sdepth (t : stree) : nat :=
  match t with SLeaf _ => 0 | SNode l r => S (Nat.max (sdepth l) (sdepth r)) end.
Fixpoint sleaves (t : stree) : list R :=
  match t with SLeaf x => [x] | SNode l r => sleaves l ++ sleaves r end.

Definition lsum (xs : list R) : R := fold_right Rplus 0 xs.

Lemma lsum_app : forall xs ys, lsum (xs ++ ys) = lsum xs + lsum ys.
Proof. induction xs; intros; simpl; [ring | rewrite IHxs; ring]. Qed.

Lemma lsum_perm : forall xs ys, Permutation xs ys -> lsum xs = lsum ys.
Proof.
  intros xs ys H. induction H; unfold lsum in *; simpl; lra.
Qed.

Lemma sval_leaves : forall t, sval t = lsum (sleaves t).
Proof. induction t; simpl; [unfold lsum; simpl; ring | rewrite lsum_app; lra]. Qed.

Lemma sabs_leaves : forall t, sabs t = lsum (map Rabs (sleaves t)).
Proof. induction t; simpl; [unfold lsum; simpl; ring | rewrite map_app, lsum_app; lra]. Qed.

Lemma sabs_nonneg : forall t, 0 <= sabs t.
Proof. induction t; simpl; [apply Rabs_pos | lra]. Qed.

Lemma sdepth_le_leaves : forall t, (sdepth t <= length (sleaves t) - 1)%nat.
Proof.
  induction t; simpl; [lia|]. rewrite app_length.
  assert (forall s, 1 <= length (sleaves s))%nat.
  { induction s; simpl; [lia | rewrite app_length; lia]. }
  pose proof (H t1). pose proof (H t2). lia.
Qed.

Lemma sfl_format : forall t, Forall (fun x => format x) (sleaves t) -> format (sfl t).
Proof.
  induction t; simpl; intros H.
  - inversion H; auto.
  - apply fl_format.
Qed.

(** The rounding error of a summation tree is at most [gamma_depth * sum|x|]. *)
Theorem sum_tree_error :
  forall t, Forall (fun x => format x) (sleaves t) -> INR (sdepth t) * u < 1 ->
  Rabs (sfl t - sval t) <= gamma (sdepth t) * sabs t.
Proof.
  induction t as [x | l IHl r IHr]; simpl; intros Hf Hd.
  - rewrite Rminus_eq_0, Rabs_R0. unfold gamma; simpl. lra.
  - apply Forall_app in Hf as [Hfl Hfr].
    set (m := Nat.max (sdepth l) (sdepth r)) in *.
    assert (Hm : INR m * u < 1).
    { apply Rle_lt_trans with (INR (S m) * u); [|exact Hd].
      apply Rmult_le_compat_r; [left; apply u_pos | apply le_INR; lia]. }
    assert (Hl : INR (sdepth l) * u < 1).
    { apply Rle_lt_trans with (INR m * u); [|exact Hm].
      apply Rmult_le_compat_r; [left; apply u_pos | apply le_INR; lia]. }
    assert (Hr : INR (sdepth r) * u < 1).
    { apply Rle_lt_trans with (INR m * u); [|exact Hm].
      apply Rmult_le_compat_r; [left; apply u_pos | apply le_INR; lia]. }
    specialize (IHl Hfl Hl). specialize (IHr Hfr Hr).
    pose proof (gamma_mono (sdepth l) m ltac:(lia) Hm) as Gl.
    pose proof (gamma_mono (sdepth r) m ltac:(lia) Hm) as Gr.
    pose proof (gamma_step m Hd) as Gs.
    pose proof (gamma_nonneg m Hm) as G0.
    pose proof (fl_add_error (sfl l) (sfl r) (sfl_format l Hfl) (sfl_format r Hfr)) as Ha.
    pose proof (sabs_nonneg l). pose proof (sabs_nonneg r). pose proof u_pos.
    set (a := sfl l) in *. set (b := sfl r) in *.
    (* |fl(a+b) - (L+R)| <= |fl(a+b) - (a+b)| + |a - L| + |b - R| *)
    assert (E : Rabs (fl (a + b) - (sval l + sval r))
                <= Rabs (fl (a + b) - (a + b)) + Rabs (a - sval l) + Rabs (b - sval r)).
    { replace (fl (a + b) - (sval l + sval r))
        with ((fl (a + b) - (a + b)) + (a - sval l) + (b - sval r)) by ring.
      eapply Rle_trans; [apply Rabs_triang|].
      apply Rplus_le_compat_r. apply Rabs_triang. }
    assert (Hab : Rabs (a + b) <= sabs l + sabs r + Rabs (a - sval l) + Rabs (b - sval r)).
    { replace (a + b) with ((a - sval l) + (b - sval r) + (sval l + sval r)) by ring.
      eapply Rle_trans; [apply Rabs_triang|].
      assert (Rabs (sval l + sval r) <= sabs l + sabs r).
      { eapply Rle_trans; [apply Rabs_triang|].
        assert (forall s, Rabs (sval s) <= sabs s).
        { induction s; simpl; [lra | eapply Rle_trans; [apply Rabs_triang | lra]]. }
        pose proof (H2 l); pose proof (H2 r); lra. }
      pose proof (Rabs_triang (a - sval l) (b - sval r)). lra. }
    assert (El : Rabs (a - sval l) <= gamma m * sabs l) by nra.
    assert (Er : Rabs (b - sval r) <= gamma m * sabs r) by nra.
    apply Rle_trans with ((1 + u) * gamma m * (sabs l + sabs r) + u * (sabs l + sabs r)).
    + nra.
    + assert (0 <= sabs l + sabs r) by lra. nra.
Qed.

(** Any order: for ANY tree whose leaves are a permutation of the list [xs]
    of floats, [|fl - sum xs| <= gamma_(n-1) sum|xs|] ([n = length xs]); the
    depth version above is sharper for balanced (blocked, pairwise) trees. *)
Theorem sum_any_order :
  forall (xs : list R) (t : stree),
  Permutation (sleaves t) xs -> Forall (fun x => format x) xs ->
  INR (length xs - 1) * u < 1 ->
  Rabs (sfl t - lsum xs) <= gamma (length xs - 1) * lsum (map Rabs xs).
Proof.
  intros xs t Hp Hf Hn.
  assert (Hlen : length (sleaves t) = length xs) by (apply Permutation_length; exact Hp).
  pose proof (sdepth_le_leaves t) as Hd. rewrite Hlen in Hd.
  assert (Hf' : Forall (fun x => format x) (sleaves t)).
  { eapply Permutation_Forall; [apply Permutation_sym; exact Hp | exact Hf]. }
  assert (Hdu : INR (sdepth t) * u < 1).
  { apply Rle_lt_trans with (INR (length xs - 1) * u); [|exact Hn].
    apply Rmult_le_compat_r; [left; apply u_pos | apply le_INR; exact Hd]. }
  rewrite <- (lsum_perm _ _ Hp), <- (lsum_perm _ _ (Permutation_map Rabs Hp)).
  rewrite <- sval_leaves, <- sabs_leaves.
  eapply Rle_trans; [apply sum_tree_error; assumption|].
  apply Rmult_le_compat_r; [apply sabs_nonneg | apply gamma_mono; assumption].
Qed.

(** [fperror.sum_nonneg_upper] / [sum_nonneg_lower]: for nonnegative floats
    summed in any order, [fl/(1+gamma_k) <= sum <= fl/(1-gamma_k)] for every
    [k >= n-1] with [k u <= 1/4] (the code uses [k = n <= 2^40]). *)
Theorem sum_nonneg_bounds :
  forall (xs : list R) (t : stree) (k : nat),
  Permutation (sleaves t) xs -> Forall (fun x => format x /\ 0 <= x) xs ->
  (length xs - 1 <= k)%nat -> INR k * u <= / 4 ->
  sfl t / (1 + gamma k) <= lsum xs <= sfl t / (1 - gamma k).
Proof.
  intros xs t k Hp Hf Hk Hku.
  assert (Hf1 : Forall (fun x => format x) xs) by (eapply Forall_impl; [|exact Hf]; simpl; tauto).
  assert (Habs : map Rabs xs = xs).
  { clear -Hf. induction Hf as [|x xs [_ Hx] _ IH]; simpl; [reflexivity|].
    rewrite Rabs_pos_eq by exact Hx. rewrite IH. reflexivity. }
  assert (Hnu : INR (length xs - 1) * u < 1).
  { apply Rle_lt_trans with (INR k * u); [|lra].
    apply Rmult_le_compat_r; [left; apply u_pos | apply le_INR; exact Hk]. }
  pose proof (sum_any_order xs t Hp Hf1 Hnu) as H. rewrite Habs in H.
  assert (Hg : gamma (length xs - 1) <= gamma k) by (apply gamma_mono; [exact Hk | lra]).
  pose proof (gamma_small k Hku). pose proof (gamma_nonneg (length xs - 1) Hnu).
  assert (Hs : 0 <= lsum xs).
  { clear -Hf. induction Hf as [|x xs [_ Hx] _ IH]; unfold lsum in *; simpl; lra. }
  assert (Hb : Rabs (sfl t - lsum xs) <= gamma k * lsum xs) by nra.
  apply Rabs_le_inv in Hb.
  assert (0 <= gamma k) by (apply gamma_nonneg; lra).
  split.
  - unfold Rdiv. apply Rmult_le_reg_r with (1 + gamma k); [lra|].
    rewrite Rmult_assoc, Rinv_l by lra. lra.
  - unfold Rdiv. apply Rmult_le_reg_r with (1 - gamma k); [lra|].
    rewrite Rmult_assoc, Rinv_l by lra. lra.
Qed.
