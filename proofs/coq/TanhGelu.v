(** * Lemma 1.1b: the tanh-approximated GELU is 1.128994-Lipschitz

    Backs [proofs/theory-lipschitz.md] §1.1 Lemma 1.1b; code:
    [bounds._spec.activation_constants] ('gelu_tanh', 'gelu_new',
    'gelu_pytorch_tanh'), which returns [L_phi = 1.128994].
    [psi_t(x) = x/2 (1 + tanh u)], [u = k(x + a x^3)], [k = sqrt(2/pi)],
    [a = 0.044715].  The core [[-6, 6]] is [Scalars.tanh_gelu_core]
    (Interval); the tails are done here by a monotonicity argument (mean
    value theorem), then the Lipschitz bound by [bounded_variation].
    (gelu_fast's [k = 0.7978845608] is a different function: prose.) *)

From Coq Require Import Reals Psatz.
From Coquelicot Require Import Coquelicot.
From Interval Require Import Tactic.
From Flocq Require Import Raux.
From Certbound Require Import Scalars.
Open Scope R_scope.

Definition u_t (x : R) : R := tanh_k * (x + tanh_a * x ^ 3).
Definition psi_t (x : R) : R := x / 2 * (1 + tanh (u_t x)).

Lemma tanh_k_pos : 0 < tanh_k.
Proof. unfold tanh_k. apply sqrt_lt_R0. pose proof PI_RGT_0. apply Rdiv_lt_0_compat; lra. Qed.

Lemma E_pos : forall x, 0 < tanh_E x.
Proof. intros; apply exp_pos. Qed.

(** [(1 + tanh u)/2 = e^(2u)/(e^(2u)+1)]. *)
Lemma half_one_plus_tanh : forall x, (1 + tanh (u_t x)) / 2 = tanh_E x / (tanh_E x + 1).
Proof.
  intros x. unfold tanh, sinh, cosh, tanh_E. fold (u_t x). set (y := u_t x).
  replace (2 * y) with (y + y) by ring. rewrite exp_plus.
  assert (Hn : exp (- y) = / exp y) by apply exp_Ropp.
  rewrite Hn. pose proof (exp_pos y). set (e := exp y) in *.
  assert (0 < / e) by (apply Rinv_0_lt_compat; lra).
  field. split; [nra | lra].
Qed.

Lemma psi_t_eq : forall x, psi_t x = x * (tanh_E x / (tanh_E x + 1)).
Proof. intros x. unfold psi_t. rewrite <- half_one_plus_tanh. field. Qed.

Lemma is_derive_psi_t : forall x : R, is_derive psi_t x (dpsi_tanh x).
Proof.
  intros x. apply (is_derive_ext (fun t => t * (tanh_E t / (tanh_E t + 1)))).
  { intros t. rewrite psi_t_eq. reflexivity. }
  unfold dpsi_tanh, tanh_E. auto_derive.
  - match goal with |- exp ?a + 1 <> 0 => pose proof (exp_pos a); lra end.
  - replace (x ^ 3) with (x * (x * (x * 1))) by ring. set (E := exp _).
    assert (0 < E) by apply exp_pos. field. lra.
Qed.

(** The tails: [h(t) = 2 t k (1 + 3 a t^2) e^(-2 u(t))] decreases on [t >= 6]. *)
Definition h_tail (t : R) : R := 2 * t * tanh_k * (1 + 3 * tanh_a * t ^ 2) * exp (- (2 * u_t t)).
Definition dh_tail (t : R) : R :=
  2 * tanh_k * exp (- (2 * u_t t)) *
  ((1 + 9 * tanh_a * t ^ 2) - 2 * tanh_k * t * (1 + 3 * tanh_a * t ^ 2) ^ 2).

Lemma is_derive_h_tail : forall t : R, is_derive h_tail t (dh_tail t).
Proof.
  intros t. unfold h_tail, dh_tail, u_t. auto_derive; [exact I|].
  replace (t ^ 3) with (t * (t * (t * 1))) by ring. set (E := exp _). ring.
Qed.

Lemma h_tail_6 : h_tail 6 <= / 1000000000.
Proof. unfold h_tail, u_t, tanh_k, tanh_a. interval with (i_prec 60). Qed.

Lemma h_tail_le : forall t, 6 <= t -> h_tail t <= / 1000000000.
Proof.
  intros t Ht. pose proof h_tail_6. destruct Ht as [Ht|Ht]; [|rewrite <- Ht; lra].
  destruct (MVT_cor2 h_tail dh_tail 6 t Ht) as (c & Hc & Hcr).
  - intros c _. apply is_derive_Reals, is_derive_h_tail.
  - assert (Hk : 1 / 4 <= tanh_k) by (unfold tanh_k; interval with (i_prec 60)).
    assert (Ha : tanh_a = 0.044715) by reflexivity.
    assert (Hneg : (1 + 9 * tanh_a * c ^ 2) - 2 * tanh_k * c * (1 + 3 * tanh_a * c ^ 2) ^ 2 < 0).
    { assert (H1 : 1 <= 1 + 3 * tanh_a * c ^ 2) by (rewrite Ha; nra).
      assert (H2 : 3 <= 2 * tanh_k * c) by nra.
      assert (3 * (1 + 3 * tanh_a * c ^ 2) <= 2 * tanh_k * c * (1 + 3 * tanh_a * c ^ 2)) by nra.
      assert (2 * tanh_k * c * (1 + 3 * tanh_a * c ^ 2) <= 2 * tanh_k * c * (1 + 3 * tanh_a * c ^ 2) ^ 2) by nra.
      rewrite Ha in *. nra. }
    assert (dh_tail c <= 0).
    { unfold dh_tail. pose proof (exp_pos (- (2 * u_t c))). pose proof tanh_k_pos.
      assert (0 <= 2 * tanh_k * exp (- (2 * u_t c)) * - ((1 + 9 * tanh_a * c ^ 2) - 2 * tanh_k * c * (1 + 3 * tanh_a * c ^ 2) ^ 2))
        by (apply Rmult_le_pos; [apply Rmult_le_pos|]; lra).
      lra. }
    assert (0 <= - dh_tail c * (t - 6)) by (apply Rmult_le_pos; lra). lra.
Qed.

Lemma frac_E : forall E, 0 < E -> 0 < E / (E + 1) < 1.
Proof.
  intros E HE. split; [apply Rdiv_lt_0_compat; lra|].
  apply (Rmult_lt_reg_r (E + 1)); [lra|]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. lra.
Qed.

Lemma u_t_odd : forall x, u_t (- x) = - u_t x.
Proof. intros x. unfold u_t. ring. Qed.

(** [|psi_t'(x)| < 1.128994] for every real [x]. *)
Theorem tanh_gelu_derivative_bound : forall x, Rabs (dpsi_tanh x) < 1.128994.
Proof.
  intros x. destruct (Rle_lt_dec (Rabs x) 6) as [Hc|Ht].
  - apply tanh_gelu_core. apply Rabs_le_inv in Hc. exact Hc.
  - pose proof tanh_k_pos as Hk. assert (Ha : 0 < tanh_a) by (unfold tanh_a; lra).
    unfold dpsi_tanh. set (E := tanh_E x). assert (HE : 0 < E) by apply E_pos.
    assert (HT1 : 0 < E / (E + 1) < 1) by (apply frac_E; exact HE).
    assert (HP : 0 < tanh_k * (1 + 3 * tanh_a * x ^ 2)) by (apply Rmult_lt_0_compat; [lra | nra]).
    assert (HF : 0 < 2 * E / (E + 1) ^ 2) by (apply Rdiv_lt_0_compat; [lra | nra]).
    (* 2E/(E+1)^2 <= 2/E and <= 2E *)
    assert (HF1 : 2 * E / (E + 1) ^ 2 <= 2 / E).
    { apply Rmult_le_reg_r with ((E + 1) ^ 2 * E); [nra|].
      unfold Rdiv. replace (2 * E * / (E + 1) ^ 2 * ((E + 1) ^ 2 * E)) with (2 * E * E) by (field; lra).
      replace (2 * / E * ((E + 1) ^ 2 * E)) with (2 * (E + 1) ^ 2) by (field; lra). nra. }
    assert (HF2 : 2 * E / (E + 1) ^ 2 <= 2 * E).
    { apply Rmult_le_reg_r with ((E + 1) ^ 2); [nra|].
      unfold Rdiv. replace (2 * E * / (E + 1) ^ 2 * (E + 1) ^ 2) with (2 * E) by (field; lra). nra. }
    destruct (Rlt_le_dec x 0) as [Hx|Hx].
    + (* x < -6: E = e^(2u(x)) = e^(-2u(-x)), T1 in (0,1), T2 in [-h(-x), 0] *)
      assert (Hxm : 6 < - x) by (rewrite Rabs_left in Ht by exact Hx; lra).
      assert (HEh : E = exp (- (2 * u_t (- x)))) by (unfold E, tanh_E; rewrite u_t_odd; f_equal; unfold u_t; ring).
      pose proof (h_tail_le (- x) ltac:(lra)) as Hh. unfold h_tail in Hh. rewrite <- HEh in Hh.
      assert (HT2 : - x * tanh_k * (1 + 3 * tanh_a * x ^ 2) * (2 * E / (E + 1) ^ 2) <= / 1000000000).
      { replace ((- x) ^ 2) with (x ^ 2) in Hh by ring.
        assert (- x * tanh_k * (1 + 3 * tanh_a * x ^ 2) * (2 * E / (E + 1) ^ 2)
                <= - x * tanh_k * (1 + 3 * tanh_a * x ^ 2) * (2 * E)).
        { apply Rmult_le_compat_l; [|exact HF2]. replace (- x * tanh_k * (1 + 3 * tanh_a * x ^ 2)) with ((- x) * (tanh_k * (1 + 3 * tanh_a * x ^ 2))) by ring.
          apply Rmult_le_pos; lra. }
        lra. }
      assert (0 <= - x * tanh_k * (1 + 3 * tanh_a * x ^ 2) * (2 * E / (E + 1) ^ 2)).
      { replace (- x * tanh_k * (1 + 3 * tanh_a * x ^ 2)) with ((- x) * (tanh_k * (1 + 3 * tanh_a * x ^ 2))) by ring.
        apply Rmult_le_pos; [apply Rmult_le_pos|]; lra. }
      apply Rabs_def1; lra.
    + assert (Hxp : 6 < x) by (rewrite Rabs_pos_eq in Ht by exact Hx; lra).
      pose proof (h_tail_le x ltac:(lra)) as Hh. unfold h_tail in Hh.
      assert (HEh : / E = exp (- (2 * u_t x))) by (unfold E, tanh_E; rewrite exp_Ropp; f_equal).
      assert (HT2 : x * tanh_k * (1 + 3 * tanh_a * x ^ 2) * (2 * E / (E + 1) ^ 2) <= / 1000000000).
      { apply Rle_trans with (x * tanh_k * (1 + 3 * tanh_a * x ^ 2) * (2 / E)).
        - apply Rmult_le_compat_l; [|exact HF1].
          replace (x * tanh_k * (1 + 3 * tanh_a * x ^ 2)) with (x * (tanh_k * (1 + 3 * tanh_a * x ^ 2))) by ring.
          apply Rmult_le_pos; lra.
        - unfold Rdiv. rewrite HEh. lra. }
      assert (0 <= x * tanh_k * (1 + 3 * tanh_a * x ^ 2) * (2 * E / (E + 1) ^ 2)).
      { replace (x * tanh_k * (1 + 3 * tanh_a * x ^ 2)) with (x * (tanh_k * (1 + 3 * tanh_a * x ^ 2))) by ring.
        apply Rmult_le_pos; [apply Rmult_le_pos|]; lra. }
      apply Rabs_def1; lra.
Qed.

(** Lemma 1.1b: [|psi_t(x) - psi_t(y)| <= 1.128994 |x - y|], and
    [|psi_t(x)| <= |x|] (so [phi_0 = 0], [phi_1 = 1]). *)
Theorem tanh_gelu_lipschitz : forall x y, Rabs (psi_t x - psi_t y) <= 1.128994 * Rabs (x - y).
Proof.
  intros x y. apply (bounded_variation psi_t dpsi_tanh 1.128994 y x).
  intros t _. split; [apply is_derive_psi_t | left; apply tanh_gelu_derivative_bound].
Qed.

Theorem tanh_gelu_growth : forall x, Rabs (psi_t x) <= Rabs x.
Proof.
  intros x. rewrite psi_t_eq, Rabs_mult. pose proof (E_pos x).
  assert (0 < tanh_E x / (tanh_E x + 1) < 1) by (apply frac_E; exact H).
  rewrite (Rabs_pos_eq (_ / _)) by lra. pose proof (Rabs_pos x). nra.
Qed.
