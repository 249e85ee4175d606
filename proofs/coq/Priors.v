(** * Priors, grids and the union bound of Theorem 2

    Backs [proofs/theory-theorems.md] §6.1 (Lemma 6.1, Lemma 6.2), §6.1b
    (light priors, Lemma 6.1b) and the bookkeeping of §T2 (Theorem 2's union
    bound); code: [certbound/bounds/_grids.py] ([two_sided_prior],
    [two_sided_prior_mass], [two_sided_log_inv_prior], [light_index_prior],
    [light_rank_prior], [light_spectral_prior], [grid_value],
    [grid_round_up]) and [bounds._theorems.theorem2_posthoc_bound]. *)

From Coq Require Import Reals Psatz List ZArith.
From Flocq Require Import Core.
From Certbound Require Import Summation.
Import ListNotations.
Open Scope R_scope.

(** ** Lemma 6.1(a): the two-sided prior [pi(k) = 2 / (3(|k|+1)(|k|+2))]. *)
Definition prior1 (k : Z) : R := 2 / (3 * (IZR (Z.abs k) + 1) * (IZR (Z.abs k) + 2)).

Lemma prior1_pos : forall k, 0 < prior1 k.
Proof.
  intros k. unfold prior1. assert (0 <= IZR (Z.abs k)) by (apply IZR_le; lia).
  apply Rdiv_lt_0_compat; [lra|]. apply Rmult_lt_0_compat; [|lra]. apply Rmult_lt_0_compat; lra.
Qed.

(** [prior_mass K = sum_{|k| <= K} pi(k)], as [two_sided_prior_mass]. *)
Fixpoint prior_mass (K : nat) : R :=
  match K with
  | O => prior1 0
  | S K' => prior_mass K' + prior1 (Z.of_nat K) + prior1 (- Z.of_nat K)
  end.

Theorem prior_mass_closed_form : forall K, prior_mass K = 1 - 4 / (3 * (INR K + 2)).
Proof.
  induction K as [|K IH].
  - simpl. unfold prior1. simpl. field.
  - change (prior_mass (S K)) with (prior_mass K + prior1 (Z.of_nat (S K)) + prior1 (- Z.of_nat (S K))).
    rewrite IH. unfold prior1. rewrite Z.abs_opp, Z.abs_eq by lia. rewrite <- INR_IZR_INZ, S_INR.
    assert (0 <= INR K) by apply pos_INR. field. lra.
Qed.

Corollary prior_mass_le_1 : forall K, prior_mass K <= 1.
Proof.
  intros K. rewrite prior_mass_closed_form. assert (0 <= INR K) by apply pos_INR.
  assert (0 < 4 / (3 * (INR K + 2))) by (apply Rdiv_lt_0_compat; lra). lra.
Qed.

(** The symmetric range [-K..K] as a list. *)
Fixpoint zrange (K : nat) : list Z :=
  match K with O => [0%Z] | S K' => Z.of_nat K :: (- Z.of_nat K)%Z :: zrange K' end.

Lemma prior_mass_list : forall K, prior_mass K = lsum (map prior1 (zrange K)).
Proof.
  induction K as [|K IH]; [unfold lsum; simpl; ring|].
  change (zrange (S K)) with (Z.of_nat (S K) :: (- Z.of_nat (S K))%Z :: zrange K).
  change (prior_mass (S K)) with (prior_mass K + prior1 (Z.of_nat (S K)) + prior1 (- Z.of_nat (S K))).
  rewrite IH. unfold lsum. simpl. ring.
Qed.

Lemma zrange_complete : forall K k, (Z.abs k <= Z.of_nat K)%Z -> In k (zrange K).
Proof.
  induction K as [|K IH]; intros k Hk; simpl.
  - left; lia.
  - destruct (Z.eq_dec k (Z.pos (Pos.of_succ_nat K))) as [E|E]; [left; lia|].
    destruct (Z.eq_dec k (Z.neg (Pos.of_succ_nat K))) as [E'|E']; [right; left; lia|].
    right; right. apply IH. rewrite Zpos_P_of_succ_nat in *. lia.
Qed.

(** A sum of a nonnegative function over a duplicate-free list contained in
    another list is at most the sum over that list. *)
Lemma lsum_sub : forall {A} (f : A -> R) (l L : list A),
  (forall x, 0 <= f x) -> NoDup l -> incl l L -> lsum (map f l) <= lsum (map f L).
Proof.
  intros A f l. induction l as [|a l IH]; intros L Hf Hnd Hinc.
  - unfold lsum; simpl. clear Hinc Hnd. induction L; simpl; [lra | pose proof (Hf a); lra].
  - inversion Hnd as [|? ? Hna Hnd']; subst.
    assert (Ha : In a L) by (apply Hinc; left; reflexivity).
    apply in_split in Ha as (L1 & L2 & ->).
    assert (Hinc' : incl l (L1 ++ L2)).
    { intros x Hx. assert (In x (L1 ++ a :: L2)) by (apply Hinc; right; exact Hx).
      apply in_app_or in H. apply in_or_app. destruct H as [H|[H|H]]; auto. subst; contradiction. }
    specialize (IH (L1 ++ L2) Hf Hnd' Hinc').
    rewrite !map_app, !lsum_app in *. simpl map. unfold lsum in *. simpl. lra.
Qed.

(** Every finite set of levels has prior mass at most 1: the countable
    family's total mass is the supremum of these finite sums. *)
Theorem prior1_finite_mass_le_1 : forall ks : list Z, NoDup ks -> lsum (map prior1 ks) <= 1.
Proof.
  intros ks Hnd. set (K := fold_right (fun k m => Nat.max (Z.to_nat (Z.abs k)) m) O ks).
  assert (HK : forall k, In k ks -> (Z.abs k <= Z.of_nat K)%Z).
  { unfold K. clear. induction ks as [|a ks IH]; simpl; [tauto|]. intros k [->|H]; [lia|].
    specialize (IH k H). lia. }
  eapply Rle_trans; [apply (lsum_sub prior1 ks (zrange K)); auto|].
  - intros; left; apply prior1_pos.
  - intros k Hk. apply zrange_complete, HK, Hk.
  - rewrite <- prior_mass_list. apply prior_mass_le_1.
Qed.

(** ** Lemma 6.1(b): a product prior over a finite product of finite
    families sums to the product of the sums, hence at most 1.  [choices]
    lists the products [w_1 ... w_J] over all ways to pick one weight per
    family. *)
Fixpoint choices (ws : list (list R)) : list R :=
  match ws with
  | [] => [1]
  | w :: rest => flat_map (fun a => map (fun b => a * b) (choices rest)) w
  end.

Lemma lsum_flat_map_scale : forall (w : list R) (l : list R),
  lsum (flat_map (fun a => map (fun b => a * b) l) w) = lsum w * lsum l.
Proof.
  intros w l. induction w as [|a w IH]; [unfold lsum; simpl; ring|].
  simpl. rewrite lsum_app, IH.
  assert (lsum (map (fun b => a * b) l) = a * lsum l).
  { clear IH. induction l; unfold lsum in *; simpl; [ring | rewrite IHl; ring]. }
  rewrite H. change (lsum (a :: w)) with (a + lsum w). ring.
Qed.

Theorem product_prior_mass :
  forall ws : list (list R),
  Forall (fun w => Forall (fun x => 0 <= x) w /\ lsum w <= 1) ws ->
  lsum (choices ws) <= 1 /\ 0 <= lsum (choices ws).
Proof.
  induction ws as [|w ws IH]; intros H; [unfold lsum; simpl; lra|].
  inversion H as [|? ? [Hw Hs] Hr]; subst. destruct (IH Hr) as [H1 H0].
  simpl. rewrite lsum_flat_map_scale.
  assert (0 <= lsum w).
  { clear -Hw. induction Hw; unfold lsum in *; simpl; lra. }
  split; [|apply Rmult_le_pos; lra].
  apply Rle_trans with (1 * 1); [apply Rmult_le_compat; lra | lra].
Qed.

(** ** Lemma 6.1b (light priors, the default). *)

(** (a) index prior: mass 1/2 on [p = 0] and [1/(4m)] on each of the other
    [2m] grid points: total 1. *)
Theorem light_index_prior_mass : forall m : nat, (1 <= m)%nat ->
  / 2 + INR (2 * m) * / (4 * INR m) = 1.
Proof.
  intros m Hm. rewrite mult_INR. simpl INR. assert (1 <= INR m) by (replace 1 with (INR 1) by reflexivity; apply le_INR; lia).
  field. lra.
Qed.

(** (b) rank prior given [p = 0]: 1/2 on [s = rbar], [1/(2 rbar)] on each
    [s < rbar]: total 1. *)
Theorem light_rank_prior_mass : forall r : nat, (1 <= r)%nat -> / 2 + INR r * / (2 * INR r) = 1.
Proof.
  intros r Hr. assert (1 <= INR r) by (replace 1 with (INR 1) by reflexivity; apply le_INR; lia).
  field. lra.
Qed.

(** (c) two-resolution spectral prior: fine level [q] costs
    [pi(ceil(q/nu))/(2nu)], coarse level [j] costs [pi(j)/2].  Each octave
    [j] holds exactly the [nu] fine levels [q = (j-1)nu + i], [1 <= i <= nu]
    (the code's [-((-q) // nu)] is [j] for them), so octave [j] carries
    [nu * pi(j)/(2nu) + pi(j)/2 = pi(j)], and the total is that of
    Lemma 6.1(a). *)
Lemma octave_of_fine_level : forall j i nu : Z, (1 <= i <= nu)%Z ->
  (- ((- ((j - 1) * nu + i)) / nu) = j)%Z.
Proof.
  intros j i nu Hi.
  assert (H : ((- ((j - 1) * nu + i)) / nu = - j)%Z).
  { symmetry. apply Z.div_unique with (nu - i)%Z; [lia | ring]. }
  lia.
Qed.

Theorem light_spectral_octave_mass : forall (nu : nat) (j : Z), (1 <= nu)%nat ->
  INR nu * (prior1 j / (2 * INR nu)) + prior1 j / 2 = prior1 j.
Proof.
  intros nu j Hnu. assert (1 <= INR nu) by (replace 1 with (INR 1) by reflexivity; apply le_INR; lia).
  field. lra.
Qed.

(** Lemma 6.1b(c): the octaves [|j| <= K] (their fine and coarse levels)
    carry exactly [1 - 4/(3(K+2))]. *)
Theorem light_spectral_partial_mass : forall (nu K : nat), (1 <= nu)%nat ->
  lsum (map (fun j => INR nu * (prior1 j / (2 * INR nu)) + prior1 j / 2) (zrange K))
  = 1 - 4 / (3 * (INR K + 2)).
Proof.
  intros nu K Hnu.
  rewrite (map_ext _ prior1) by (intros j; apply light_spectral_octave_mass; exact Hnu).
  rewrite <- prior_mass_list. apply prior_mass_closed_form.
Qed.

(** ** Lemma 6.2 (grid rounding): [k = ceil(nu log2(x/x0))] gives
    [x <= x0 2^(k/nu) < 2^(1/nu) x]. *)
Definition pow2 (y : R) : R := exp (y * ln 2).

Theorem grid_rounding :
  forall x x0 nu : R, 0 < x -> 0 < x0 -> 1 <= nu ->
  let k := Zceil (nu * (ln (x / x0) / ln 2)) in
  x <= x0 * pow2 (IZR k / nu) < pow2 (1 / nu) * x.
Proof.
  intros x x0 nu Hx Hx0 Hnu k.
  assert (Hl2 : 0 < ln 2) by (rewrite <- ln_1; apply ln_increasing; lra).
  set (y := ln (x / x0) / ln 2).
  assert (Hk1 : nu * y <= IZR k) by apply Zceil_ub.
  assert (Hk2 : IZR k < nu * y + 1) by apply Zceil_lb.
  assert (Hxy : x0 * pow2 y = x).
  { unfold pow2, y. replace (ln (x / x0) / ln 2 * ln 2) with (ln (x / x0)) by (field; lra).
    rewrite exp_ln by (apply Rdiv_lt_0_compat; lra). field. lra. }
  assert (Hnu0 : 0 < nu) by lra.
  assert (Hy1 : y <= IZR k / nu).
  { apply Rmult_le_reg_l with nu; [lra|]. unfold Rdiv. rewrite <- Rmult_assoc, (Rmult_comm nu (IZR k)),
      Rmult_assoc, Rinv_r, Rmult_1_r by lra. lra. }
  assert (Hy2 : IZR k / nu < 1 / nu + y).
  { apply Rmult_lt_reg_l with nu; [lra|]. unfold Rdiv.
    rewrite Rmult_plus_distr_l, <- !Rmult_assoc, (Rmult_comm nu (IZR k)), (Rmult_comm nu 1),
      !Rmult_assoc, Rinv_r, !Rmult_1_r by lra. lra. }
  split.
  - rewrite <- Hxy at 1. apply Rmult_le_compat_l; [lra|]. unfold pow2.
    assert (Hm : y * ln 2 <= IZR k / nu * ln 2) by (apply Rmult_le_compat_r; lra).
    destruct Hm as [Hm|Hm]; [left; apply exp_increasing; exact Hm | right; rewrite Hm; reflexivity].
  - rewrite <- Hxy. unfold pow2.
    replace (exp (1 / nu * ln 2) * (x0 * exp (y * ln 2))) with (x0 * exp ((1 / nu + y) * ln 2))
      by (rewrite Rmult_plus_distr_r, exp_plus; ring).
    apply Rmult_lt_compat_l; [lra|]. apply exp_increasing. apply Rmult_lt_compat_r; lra.
Qed.

(** ** Theorem 2's union bound: with [delta_kappa = delta pi(kappa)], every
    finite set of configurations has total failure probability at most
    [delta] (Lemma 6.1), and the confidence term's logarithm splits as
    [ln(2/delta_kappa) = ln(2/delta) + ln(1/pi(kappa))] (§T2). *)
Theorem union_bound_budget : forall (delta : R) (pis : list R),
  0 < delta -> Forall (fun p => 0 <= p) pis -> lsum pis <= 1 ->
  lsum (map (fun p => delta * p) pis) <= delta.
Proof.
  intros delta pis Hd Hp Hs.
  assert (lsum (map (fun p => delta * p) pis) = delta * lsum pis).
  { clear. induction pis; unfold lsum in *; simpl; [ring | rewrite IHpis; ring]. }
  rewrite H. apply Rle_trans with (delta * 1); [apply Rmult_le_compat_l; lra | lra].
Qed.

Theorem confidence_log_split : forall delta p : R, 0 < delta -> 0 < p ->
  ln (2 / (delta * p)) = ln (2 / delta) + ln (1 / p).
Proof.
  intros delta p Hd Hp. rewrite <- ln_mult by (apply Rdiv_lt_0_compat; lra).
  f_equal. field. lra.
Qed.
