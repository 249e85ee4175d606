(** * Lemma 1.1: the exact GELU [psi(x) = x Phi(x)] is [L]-Lipschitz,
    [L = Phi(sqrt 2) + sqrt 2 phi(sqrt 2)]

    Backs [proofs/theory-lipschitz.md] §1.1 Lemma 1.1 (and its use as
    [L_phi] in §F3); code: [bounds._spec.gelu_lipschitz],
    [activation_constants("gelu")], [bounds.proxies.gelu_lipschitz_constant].
    With [Scalars.gelu_constant_enclosure] and [Scalars.gelu_closed_form]
    this machine-checks the whole lemma except [|psi(x)| <= |x|]
    ([0 <= Phi <= 1], i.e. the total mass of the Gaussian, prose).

    [Phi x = 1/2 + integral_0^x phi] is the standard normal c.d.f. (it uses
    [integral_(-inf)^0 phi = 1/2]); only this formula enters the proof. *)

From Coq Require Import Reals Psatz.
From Coquelicot Require Import Coquelicot.
From Certbound Require Import Scalars.
Open Scope R_scope.

Definition gauss (t : R) : R := exp (- (t * t) / 2).
Definition cst : R := / sqrt (2 * PI).
Definition psi (x : R) : R := x * Phi x.
Definition dpsi (x : R) : R := Phi x + x * phi x.

Lemma cst_pos : 0 < cst.
Proof.
  unfold cst. apply Rinv_0_lt_compat, sqrt_lt_R0. pose proof PI_RGT_0. lra.
Qed.

Lemma phi_eq : forall x, phi x = cst * gauss x.
Proof. intros x. unfold phi, cst, gauss. field. apply Rgt_not_eq, sqrt_lt_R0. pose proof PI_RGT_0. lra. Qed.

Lemma phi_pos : forall x, 0 < phi x.
Proof. intros x. rewrite phi_eq. apply Rmult_lt_0_compat; [apply cst_pos | apply exp_pos]. Qed.

Lemma gauss_cont : forall z, continuous gauss z.
Proof. intros z. apply continuous_gauss. Qed.

Lemma gauss_int : forall a b, ex_RInt gauss a b.
Proof. intros a b. apply (@ex_RInt_continuous R_CompleteNormedModule). intros z _. apply gauss_cont. Qed.

Lemma Phi_eq : forall x, Phi x = / 2 + cst * RInt gauss 0 x.
Proof. reflexivity. Qed.

Lemma is_derive_Phi : forall x, is_derive Phi x (phi x).
Proof.
  intros x. rewrite phi_eq.
  assert (H : is_derive (fun b => RInt gauss 0 b) x (gauss x)).
  { apply (is_derive_RInt gauss (fun b => RInt gauss 0 b) 0 x).
    - apply filter_forall. intros b. apply (@RInt_correct R_CompleteNormedModule), gauss_int.
    - apply gauss_cont. }
  apply is_derive_Reals. apply is_derive_Reals in H.
  replace (cst * gauss x) with (0 + cst * gauss x) by ring.
  change Phi with (plus_fct (fun _ => / 2) (mult_real_fct cst (fun t => RInt gauss 0 t))).
  apply derivable_pt_lim_plus; [apply derivable_pt_lim_const | apply derivable_pt_lim_scal, H].
Qed.

Lemma is_derive_phi : forall x : R, is_derive phi x (- x * phi x).
Proof.
  intros x. unfold phi. auto_derive; [exact I|].
  assert (0 < sqrt (2 * PI)) by (apply sqrt_lt_R0; pose proof PI_RGT_0; lra).
  unfold Rdiv. field. lra.
Qed.

Lemma is_derive_psi : forall x, is_derive psi x (dpsi x).
Proof.
  intros x. unfold dpsi. apply is_derive_Reals.
  replace (Phi x + x * phi x) with (1 * Phi x + id x * phi x) by (unfold id; ring).
  change psi with (mult_fct id Phi).
  apply derivable_pt_lim_mult; [apply derivable_pt_lim_id | apply is_derive_Reals, is_derive_Phi].
Qed.

Lemma is_derive_dpsi : forall x, is_derive dpsi x (phi x * (2 - x * x)).
Proof.
  intros x. apply is_derive_Reals.
  replace (phi x * (2 - x * x)) with (phi x + (1 * phi x + id x * (- x * phi x))) by (unfold id; ring).
  change dpsi with (plus_fct Phi (mult_fct id phi)).
  apply derivable_pt_lim_plus; [apply is_derive_Reals, is_derive_Phi|].
  apply derivable_pt_lim_mult; [apply derivable_pt_lim_id | apply is_derive_Reals, is_derive_phi].
Qed.

(** [Phi x <= 1/2] for [x <= 0], [Phi x >= 1/2] for [x >= 0]. *)
Lemma RInt_gauss_sign : forall x, (0 <= x -> 0 <= RInt gauss 0 x) /\ (x <= 0 -> RInt gauss 0 x <= 0).
Proof.
  intros x. split; intros Hx.
  - apply RInt_ge_0; [exact Hx | apply gauss_int | intros; left; apply exp_pos].
  - rewrite <- (opp_RInt_swap gauss x 0) by apply gauss_int.
    assert (0 <= RInt gauss x 0) by (apply RInt_ge_0; [exact Hx | apply gauss_int | intros; left; apply exp_pos]).
    unfold opp; simpl. lra.
Qed.

(** Symmetry: [Phi(-x) = 1 - Phi(x)] ([gauss] is even). *)
Lemma RInt_gauss_odd : forall x, RInt gauss 0 (- x) = - RInt gauss 0 x.
Proof.
  intros x. pose proof (RInt_comp_lin gauss (-1) 0 0 x (gauss_int _ _)) as H.
  replace (-1 * 0 + 0) with 0 in H by ring. replace (-1 * x + 0) with (- x) in H by ring.
  rewrite <- H.
  rewrite (RInt_ext _ (fun y => scal (-1) (gauss y))).
  2: { intros y _. f_equal. unfold gauss. f_equal. field. }
  rewrite (@RInt_scal R_CompleteNormedModule) by apply gauss_int. unfold scal; simpl; unfold mult; simpl. ring.
Qed.

Lemma phi_even : forall x, phi (- x) = phi x.
Proof. intros x. unfold phi. f_equal. f_equal. field. Qed.

Lemma dpsi_sym : forall x, dpsi (- x) = 1 - dpsi x.
Proof.
  intros x. unfold dpsi. rewrite phi_even, !Phi_eq, RInt_gauss_odd. field.
Qed.

Lemma L_big : / 2 < gelu_L.
Proof. pose proof gelu_constant_enclosure. lra. Qed.

Lemma L_eq : gelu_L = dpsi (sqrt 2).
Proof. reflexivity. Qed.

Lemma mvt_dpsi : forall a b, a < b -> exists c, dpsi b - dpsi a = phi c * (2 - c * c) * (b - a) /\ a < c < b.
Proof.
  intros a b Hab. apply (MVT_cor2 dpsi (fun c => phi c * (2 - c * c)) a b Hab).
  intros c _. apply is_derive_Reals, is_derive_dpsi.
Qed.

Theorem dpsi_le_L : forall x, dpsi x <= gelu_L.
Proof.
  intros x. pose proof L_big. pose proof (sqrt_lt_R0 2 ltac:(lra)) as Hs.
  assert (Hs2 : sqrt 2 * sqrt 2 = 2) by (apply sqrt_sqrt; lra).
  destruct (Rle_lt_dec x 0) as [Hx|Hx].
  - unfold dpsi. rewrite Phi_eq. destruct (RInt_gauss_sign x) as [_ H2]. specialize (H2 Hx).
    pose proof cst_pos. pose proof (phi_pos x).
    assert (0 <= cst * (- RInt gauss 0 x)) by (apply Rmult_le_pos; lra).
    assert (0 <= (- x) * phi x) by (apply Rmult_le_pos; lra).
    lra.
  - rewrite L_eq. destruct (Rtotal_order x (sqrt 2)) as [Hlt|[Heq|Hgt]].
    + destruct (mvt_dpsi x (sqrt 2) Hlt) as (c & Hc & Hcr).
      assert (0 < 2 - c * c) by nra. pose proof (phi_pos c).
      assert (0 <= phi c * (2 - c * c) * (sqrt 2 - x)) by (apply Rmult_le_pos; [apply Rmult_le_pos|]; lra).
      lra.
    + rewrite Heq; lra.
    + destruct (mvt_dpsi (sqrt 2) x Hgt) as (c & Hc & Hcr).
      assert (2 - c * c < 0) by nra. pose proof (phi_pos c).
      assert (phi c * (2 - c * c) * (x - sqrt 2) <= 0).
      { assert (0 <= phi c * (c * c - 2) * (x - sqrt 2)) by (apply Rmult_le_pos; [apply Rmult_le_pos|]; lra).
        lra. }
      lra.
Qed.

Theorem dpsi_ge_minus_L : forall x, - gelu_L <= dpsi x.
Proof.
  intros x. pose proof L_big. destruct (Rle_lt_dec 0 x) as [Hx|Hx].
  - unfold dpsi. rewrite Phi_eq. destruct (RInt_gauss_sign x) as [H1 _]. specialize (H1 Hx).
    pose proof cst_pos. pose proof (phi_pos x).
    assert (0 <= cst * RInt gauss 0 x) by (apply Rmult_le_pos; lra).
    assert (0 <= x * phi x) by (apply Rmult_le_pos; lra).
    lra.
  - replace x with (- - x) by ring. rewrite dpsi_sym. pose proof (dpsi_le_L (- x)). lra.
Qed.

(** Lemma 1.1: the exact GELU is [gelu_L]-Lipschitz, and [gelu_L] is
    optimal ([psi'(sqrt 2) = gelu_L]). *)
Theorem gelu_lipschitz : forall x y, Rabs (psi x - psi y) <= gelu_L * Rabs (x - y).
Proof.
  intros x y. apply (bounded_variation psi dpsi gelu_L y x).
  intros t _. split; [apply is_derive_psi|].
  apply Rabs_le. split; [apply dpsi_ge_minus_L | apply dpsi_le_L].
Qed.

Theorem gelu_lipschitz_optimal : is_derive psi (sqrt 2) gelu_L.
Proof. rewrite L_eq. apply is_derive_psi. Qed.
