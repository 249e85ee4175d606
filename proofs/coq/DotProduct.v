(** * Dot products in any order, with or without FMA, with the underflow term

    Backs [proofs/enclosure.md] §2 Lemma 2.1 (and its use in Lemmas 2.2, 3.1,
    3.2, 8.1 and [enclosure-tight.md] Lemma T1(a)); code:
    [certbound/enclose/fperror.py] ([gamma], [_inflate], [_sumsq_upper],
    [gram_deviation_bound], [residual_norm_bound]).

    A classical evaluation of [sum_i a_i b_i] is any binary tree whose leaves
    are the rounded products [fl(a_i*b_i)], whose inner nodes are rounded
    additions [fl(s + t)] of two subresults, and whose FMA nodes
    [fl(a_i*b_i + t)] add one exact product to a subresult with one
    rounding.  The pairs [(a_i, b_i)] may appear in any order (a permutation
    of the input). *)

From Coq Require Import Reals Psatz List Permutation Arith.
From Flocq Require Import Core.
From Certbound Require Import FPModel Summation.
Import ListNotations.
Open Scope R_scope.

Inductive dtree : Type :=
  | DProd (a b : R)
  | DAdd (l r : dtree)
  | DFma (a b : R) (r : dtree).

Fixpoint dval (t : dtree) : R :=
  match t with
  | DProd a b => a * b | DAdd l r => dval l + dval r | DFma a b r => a * b + dval r
  end.
Fixpoint dabs (t : dtree) : R :=
  match t with
  | DProd a b => Rabs a * Rabs b | DAdd l r => dabs l + dabs r
  | DFma a b r => Rabs a * Rabs b + dabs r
  end.
Fixpoint dfl (t : dtree) : R :=
  match t with
  | DProd a b => fl (a * b) | DAdd l r => fl (dfl l + dfl r)
  | DFma a b r => fl (a * b + dfl r)
  end.
(** Number of roundings a product passes through on the longest path. *)
Fixpoint dheight (t : dtree) : nat :=
  match t with
  | DProd _ _ => 1 | DAdd l r => S (Nat.max (dheight l) (dheight r))
  | DFma _ _ r => S (dheight r)
  end.
Fixpoint dpairs (t : dtree) : list (R * R) :=
  match t with
  | DProd a b => [(a, b)] | DAdd l r => dpairs l ++ dpairs r
  | DFma a b r => (a, b) :: dpairs r
  end.

Definition dot (ps : list (R * R)) : R := lsum (map (fun p => fst p * snd p) ps).
Definition absdot (ps : list (R * R)) : R :=
  lsum (map (fun p => Rabs (fst p) * Rabs (snd p)) ps).

Lemma lsum_cons : forall x l, lsum (x :: l) = x + lsum l.
Proof. reflexivity. Qed.

Lemma dval_pairs : forall t, dval t = dot (dpairs t).
Proof.
  unfold dot. induction t; simpl.
  - unfold lsum; simpl; ring.
  - rewrite map_app, lsum_app, IHt1, IHt2; ring.
  - rewrite IHt; reflexivity.
Qed.

Lemma dabs_pairs : forall t, dabs t = absdot (dpairs t).
Proof.
  unfold absdot. induction t; simpl.
  - unfold lsum; simpl; ring.
  - rewrite map_app, lsum_app, IHt1, IHt2; ring.
  - rewrite IHt; reflexivity.
Qed.

Lemma dabs_nonneg : forall t, 0 <= dabs t.
Proof.
  induction t; simpl; try (pose proof (Rabs_pos a); pose proof (Rabs_pos b); nra); lra.
Qed.

Lemma dval_le_dabs : forall t, Rabs (dval t) <= dabs t.
Proof.
  induction t; simpl.
  - rewrite Rabs_mult; lra.
  - eapply Rle_trans; [apply Rabs_triang | lra].
  - eapply Rle_trans; [apply Rabs_triang|]. rewrite Rabs_mult; lra.
Qed.

Lemma dfl_format : forall t, format (dfl t).
Proof. destruct t; apply fl_format. Qed.

Lemma dheight_pos : forall t, (1 <= dheight t)%nat.
Proof. destruct t; simpl; lia. Qed.

Lemma dheight_le_count : forall t, (dheight t <= length (dpairs t))%nat.
Proof.
  induction t; simpl; [lia | rewrite app_length | ].
  - pose proof (dheight_pos t1); pose proof (dheight_pos t2). lia.
  - lia.
Qed.

Lemma INR_mono_u : forall k l, (k <= l)%nat -> INR l * u < 1 -> INR k * u < 1.
Proof.
  intros k l H Hl. apply Rle_lt_trans with (INR l * u); [|exact Hl].
  apply Rmult_le_compat_r; [left; apply u_pos | apply le_INR; exact H].
Qed.

(** The invariant: [|dfl t - dval t| <= gamma_h dabs t + (1+gamma_h) c eta/2]
    with [h] the height and [c] the number of products. *)
Theorem dot_tree_error :
  forall t, INR (dheight t) * u < 1 ->
  Rabs (dfl t - dval t)
    <= gamma (dheight t) * dabs t + (1 + gamma (dheight t)) * INR (length (dpairs t)) * (eta / 2).
Proof.
  pose proof u_pos as Hu. pose proof eta_pos as He.
  induction t as [a b | l IHl r IHr | a b r IHr]; simpl dfl; simpl dval; simpl dabs;
    simpl dheight; simpl dpairs; intros Hh.
  - (* one rounded product *)
    pose proof (fl_error_abs (a * b)) as E. rewrite Rabs_mult in E.
    pose proof u_le_gamma1. pose proof (gamma_nonneg 1 Hh).
    pose proof (Rabs_pos a); pose proof (Rabs_pos b).
    assert (u * (Rabs a * Rabs b) <= gamma 1 * (Rabs a * Rabs b)) by (apply Rmult_le_compat_r; nra).
    simpl length. simpl INR.
    assert (eta / 2 <= (1 + gamma 1) * 1 * (eta / 2)) by nra. lra.
  - (* one rounded addition of two subresults (floats): no underflow term *)
    set (m := Nat.max (dheight l) (dheight r)) in *.
    assert (Hm : INR m * u < 1) by (apply (INR_mono_u m (S m)); [lia | exact Hh]).
    assert (Hl : INR (dheight l) * u < 1) by (apply (INR_mono_u _ m); [lia | exact Hm]).
    assert (Hr : INR (dheight r) * u < 1) by (apply (INR_mono_u _ m); [lia | exact Hm]).
    specialize (IHl Hl). specialize (IHr Hr).
    pose proof (gamma_mono (dheight l) m ltac:(lia) Hm) as Gl.
    pose proof (gamma_mono (dheight r) m ltac:(lia) Hm) as Gr.
    pose proof (gamma_step m Hh) as Gs. pose proof (gamma_nonneg m Hm) as G0.
    pose proof (fl_add_error (dfl l) (dfl r) (dfl_format l) (dfl_format r)) as Ha.
    pose proof (dabs_nonneg l). pose proof (dabs_nonneg r).
    pose proof (dval_le_dabs l). pose proof (dval_le_dabs r).
    rewrite app_length, plus_INR.
    set (cl := INR (length (dpairs l))) in *. set (cr := INR (length (dpairs r))) in *.
    assert (0 <= cl) by apply pos_INR. assert (0 <= cr) by apply pos_INR.
    set (x := dfl l) in *. set (y := dfl r) in *.
    set (El := Rabs (x - dval l)) in *. set (Er := Rabs (y - dval r)) in *.
    assert (E : Rabs (fl (x + y) - (dval l + dval r)) <= Rabs (fl (x + y) - (x + y)) + El + Er).
    { replace (fl (x + y) - (dval l + dval r))
        with ((fl (x + y) - (x + y)) + (x - dval l) + (y - dval r)) by ring.
      eapply Rle_trans; [apply Rabs_triang|]. apply Rplus_le_compat_r. apply Rabs_triang. }
    assert (Hxy : Rabs (x + y) <= dabs l + dabs r + El + Er).
    { replace (x + y) with ((x - dval l) + (y - dval r) + (dval l + dval r)) by ring.
      eapply Rle_trans; [apply Rabs_triang|].
      pose proof (Rabs_triang (x - dval l) (y - dval r)).
      pose proof (Rabs_triang (dval l) (dval r)). unfold El, Er. lra. }
    set (U := (1 + gamma m) * (eta / 2)).
    assert (HU : 0 <= U) by (unfold U; nra).
    assert (Hmono : forall g c d, g <= gamma m -> 0 <= c -> 0 <= d ->
              g * d + (1 + g) * c * (eta / 2) <= gamma m * d + c * U).
    { intros g c d Hg Hc Hd. unfold U.
      assert (g * d <= gamma m * d) by (apply Rmult_le_compat_r; lra).
      assert ((1 + g) * (c * (eta / 2)) <= (1 + gamma m) * (c * (eta / 2)))
        by (apply Rmult_le_compat_r; [apply Rmult_le_pos; lra | lra]).
      lra. }
    assert (El' : El <= gamma m * dabs l + cl * U).
    { eapply Rle_trans; [exact IHl|]. apply Hmono; assumption. }
    assert (Er' : Er <= gamma m * dabs r + cr * U).
    { eapply Rle_trans; [exact IHr|]. apply Hmono; assumption. }
    assert (Hstep : (1 + u) * U <= (1 + gamma (S m)) * (eta / 2)) by (unfold U; nra).
    apply Rle_trans with ((1 + u) * (El + Er) + u * (dabs l + dabs r)); [nra|].
    apply Rle_trans with (((1 + u) * gamma m + u) * (dabs l + dabs r) + (cl + cr) * ((1 + u) * U)).
    + nra.
    + apply Rplus_le_compat; [apply Rmult_le_compat_r; [lra | exact Gs]|].
      rewrite (Rmult_comm (1 + gamma (S m))), Rmult_assoc, (Rmult_comm (1 + gamma (S m))).
      apply Rmult_le_compat_l; [lra|]. lra.
  - (* FMA: one rounding of an exact product plus a subresult *)
    set (m := dheight r) in *.
    assert (Hm : INR m * u < 1) by (apply (INR_mono_u m (S m)); [lia | exact Hh]).
    specialize (IHr Hm).
    pose proof (gamma_step m Hh) as Gs. pose proof (gamma_nonneg m Hm) as G0.
    pose proof (gamma_nonneg (S m) Hh) as G1.
    pose proof (fl_error_abs (a * b + dfl r)) as Ha.
    pose proof (dabs_nonneg r). pose proof (dval_le_dabs r).
    pose proof (Rabs_pos a); pose proof (Rabs_pos b).
    assert (Hgu : u <= gamma (S m)) by nra.
    assert (Hgm : gamma m <= gamma (S m)) by (apply gamma_mono; [lia | exact Hh]).
    simpl length. rewrite S_INR.
    set (cr := INR (length (dpairs r))) in *. assert (0 <= cr) by apply pos_INR.
    set (y := dfl r) in *. set (Er := Rabs (y - dval r)) in *.
    set (P := Rabs a * Rabs b) in *. assert (HP : Rabs (a * b) = P) by (unfold P; apply Rabs_mult).
    assert (E : Rabs (fl (a * b + y) - (a * b + dval r)) <= Rabs (fl (a * b + y) - (a * b + y)) + Er).
    { replace (fl (a * b + y) - (a * b + dval r)) with ((fl (a * b + y) - (a * b + y)) + (y - dval r)) by ring.
      apply Rabs_triang. }
    assert (Hxy : Rabs (a * b + y) <= P + dabs r + Er).
    { replace (a * b + y) with (a * b + (y - dval r) + dval r) by ring.
      eapply Rle_trans; [apply Rabs_triang|]. pose proof (Rabs_triang (a * b) (y - dval r)). unfold Er. lra. }
    set (U := (1 + gamma m) * (eta / 2)).
    assert (HU : 0 <= U) by (unfold U; nra).
    assert (Er' : Er <= gamma m * dabs r + cr * U) by (eapply Rle_trans; [exact IHr | unfold U; nra]).
    assert (Hstep : (1 + u) * U <= (1 + gamma (S m)) * (eta / 2)) by (unfold U; nra).
    apply Rle_trans with ((1 + u) * Er + u * (P + dabs r) + eta / 2); [nra|].
    apply Rle_trans with (((1 + u) * gamma m + u) * dabs r + u * P + cr * ((1 + u) * U) + eta / 2); [nra|].
    assert (eta / 2 <= (1 + gamma (S m)) * (eta / 2)) by nra.
    assert (cr * ((1 + u) * U) <= cr * ((1 + gamma (S m)) * (eta / 2))) by (apply Rmult_le_compat_l; lra).
    assert (((1 + u) * gamma m + u) * dabs r <= gamma (S m) * dabs r) by (apply Rmult_le_compat_r; lra).
    assert (u * P <= gamma (S m) * P) by (apply Rmult_le_compat_r; [unfold P; nra | lra]).
    lra.
Qed.

(** Lemma 2.1: a dot product of [k] pairs in ANY order (any tree whose
    pairs are a permutation of the input), with or without FMA:
    [|fl(x^T y) - x^T y| <= gamma_k |x|^T|y| + k eta], for [k u <= 1/2].
    ([fperror] uses the larger [2 k eta].) *)
Theorem dot_any_order :
  forall (ps : list (R * R)) (t : dtree),
  Permutation (dpairs t) ps -> INR (length ps) * u <= / 2 ->
  Rabs (dfl t - dot ps) <= gamma (length ps) * absdot ps + INR (length ps) * eta.
Proof.
  intros ps t Hp Hk.
  assert (Hlen : length (dpairs t) = length ps) by (apply Permutation_length; exact Hp).
  pose proof (dheight_le_count t) as Hh. rewrite Hlen in Hh.
  assert (Hh1 : INR (dheight t) * u < 1) by (apply (INR_mono_u _ (length ps)); [exact Hh | lra]).
  unfold dot, absdot.
  rewrite <- (lsum_perm _ _ (Permutation_map _ Hp)), <- (lsum_perm _ _ (Permutation_map (fun p => Rabs (fst p) * Rabs (snd p)) Hp)).
  fold (dot (dpairs t)) (absdot (dpairs t)). rewrite <- dval_pairs, <- dabs_pairs.
  eapply Rle_trans; [apply dot_tree_error; exact Hh1|]. rewrite Hlen.
  pose proof (gamma_mono _ _ Hh ltac:(lra)) as G. pose proof (gamma_nonneg _ Hh1).
  pose proof (gamma_le_2ku (length ps) Hk). pose proof (dabs_nonneg t). pose proof eta_pos.
  assert (0 <= INR (length ps)) by apply pos_INR.
  assert (gamma (dheight t) <= 1) by lra.
  apply Rplus_le_compat; [apply Rmult_le_compat_r; lra|].
  assert ((1 + gamma (dheight t)) * (INR (length ps) * (eta / 2)) <= 2 * (INR (length ps) * (eta / 2)))
    by (apply Rmult_le_compat_r; [apply Rmult_le_pos; lra | lra]).
  lra.
Qed.

(** Lemma 2.2 (nonnegative terms): the exact sum is at most
    [(fl + k eta)/(1 - gamma_k)]. *)
Theorem dot_nonneg_upper :
  forall (ps : list (R * R)) (t : dtree),
  Permutation (dpairs t) ps -> Forall (fun p => 0 <= fst p /\ 0 <= snd p) ps ->
  INR (length ps) * u <= / 4 ->
  (1 - gamma (length ps)) * dot ps - INR (length ps) * eta <= dfl t.
Proof.
  intros ps t Hp Hnn Hk.
  pose proof (dot_any_order ps t Hp ltac:(lra)) as H.
  assert (Habs : absdot ps = dot ps).
  { unfold absdot, dot. f_equal. apply map_ext_in. intros [x y] Hin.
    rewrite Forall_forall in Hnn. destruct (Hnn _ Hin) as [Hx Hy]. simpl in *.
    rewrite !Rabs_pos_eq by assumption. reflexivity. }
  rewrite Habs in H. apply Rabs_le_inv in H. lra.
Qed.
