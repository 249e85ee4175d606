(** * Scalar lemmas of the theory

    - Lemma 1.1 (GELU constant) of [proofs/theory-lipschitz.md] §1.1: the
      value of [Phi(sqrt 2) + sqrt 2 phi(sqrt 2)] (Interval's [integral]),
      and that it equals the code's closed form
      [(1 + erf 1)/2 + e^-1/sqrt pi] ([bounds._spec.gelu_lipschitz]);
    - Lemma 1.1b (tanh-approximated GELU): [|psi_t'(x)| < 1.128994] on the
      core [[-6, 6]] (Interval with bisection and Taylor models;
      [bounds._spec.activation_constants]);
    - monotonicity in [n] ([theory-theorems.md] §6.5): [x/(1+x) <= ln(1+x)]
      and the sign of the derivative of [(u ln(vn+1) + w)/n];
    - the scalar steps of Lemma C (chaining, [theory-chaining.md] §C) and of
      the one-step bound Lemma C2 (§C2): the geometric scales, the
      [eps_kstar < 4 alpha] step, the link constant [6] and Massart's
      constant ([bounds._dudley], [bounds._rademacher]). *)

From Coq Require Import Reals Psatz.
From Coquelicot Require Import Coquelicot.
From Interval Require Import Tactic.
Open Scope R_scope.

(** ** GELU (Lemma 1.1). [Phi] is the standard normal c.d.f. (for [x >= 0]
    written as [1/2 + integral from 0 to x of phi]). *)
Definition phi (x : R) : R := exp (- (x * x) / 2) / sqrt (2 * PI).
Definition Phi (x : R) : R := / 2 + / sqrt (2 * PI) * RInt (fun t => exp (- (t * t) / 2)) 0 x.
Definition gelu_L : R := Phi (sqrt 2) + sqrt 2 * phi (sqrt 2).

Theorem gelu_constant_enclosure : 1.1289041451 <= gelu_L <= 1.1289041452.
Proof.
  unfold gelu_L, Phi, phi. split; integral with (i_prec 70, i_fuel 200, i_degree 12).
Qed.

(** [erf 1 = (2/sqrt pi) integral_0^1 e^(-t^2) dt]; the code evaluates
    [(1 + erf 1)/2 + e^-1/sqrt pi] in Arb.  It is the same number: by the
    substitution [t = sqrt 2 y], [integral_0^sqrt2 e^(-t^2/2) = sqrt 2
    integral_0^1 e^(-y^2)]. *)
Definition erf1 : R := 2 / sqrt PI * RInt (fun t => exp (- (t * t))) 0 1.

Lemma continuous_gauss : forall z, continuous (fun t => exp (- (t * t) / 2)) z.
Proof. intros z. apply (@ex_derive_continuous R_AbsRing R_NormedModule). auto_derive. exact I. Qed.

Lemma continuous_gauss1 : forall z, continuous (fun t => exp (- (t * t))) z.
Proof. intros z. apply (@ex_derive_continuous R_AbsRing R_NormedModule). auto_derive. exact I. Qed.

Theorem gelu_closed_form : gelu_L = (1 + erf1) / 2 + exp (-1) / sqrt PI.
Proof.
  assert (Hs2 : sqrt 2 * sqrt 2 = 2) by (apply sqrt_sqrt; lra).
  assert (Hpi : 0 < PI) by apply PI_RGT_0.
  assert (Hsp : 0 < sqrt PI) by (apply sqrt_lt_R0; lra).
  assert (Hs2p : 0 < sqrt 2) by (apply sqrt_lt_R0; lra).
  assert (H2pi : sqrt (2 * PI) = sqrt 2 * sqrt PI) by (apply sqrt_mult; lra).
  assert (Hsub : RInt (fun t => exp (- (t * t) / 2)) 0 (sqrt 2)
                 = sqrt 2 * RInt (fun t => exp (- (t * t))) 0 1).
  { pose proof (RInt_comp_lin (fun t => exp (- (t * t) / 2)) (sqrt 2) 0 0 1) as H.
    rewrite Rmult_0_r, Rmult_1_r, Rplus_0_r, Rplus_0_r in H.
    rewrite <- H by (apply ex_RInt_continuous; intros; apply continuous_gauss).
    change (sqrt 2 * RInt (fun t => exp (- (t * t))) 0 1)
      with (scal (sqrt 2) (RInt (fun t => exp (- (t * t))) 0 1)).
    rewrite <- RInt_scal.
    - apply RInt_ext. intros y _. unfold scal; simpl; unfold mult; simpl. f_equal. f_equal.
      replace (- ((sqrt 2 * y + 0) * (sqrt 2 * y + 0)) / 2) with (- (y * y) * ((sqrt 2 * sqrt 2) / 2)) by field.
      rewrite Hs2. field.
    - apply ex_RInt_continuous. intros z _. apply continuous_gauss1. }
  unfold gelu_L, Phi, phi, erf1. rewrite Hsub, H2pi.
  replace (- (sqrt 2 * sqrt 2) / 2) with (-1) by (rewrite Hs2; field).
  field. split; lra.
Qed.

(** ** Lemma 1.1b (tanh GELU) on the core [[-6, 6]]:
    [psi_t'(x) = (1 + tanh u)/2 + x k (1 + 3 a x^2) sech^2(u) / 2],
    [u = k (x + a x^3)], written with [E = e^(2u)]:
    [(1 + tanh u)/2 = E/(E+1)], [sech^2 u / 2 = 2E/(E+1)^2].
    The tails [|x| >= 6] are prose (theory-lipschitz §1.1). *)
Definition tanh_k : R := sqrt (2 / PI).
Definition tanh_a : R := 0.044715.
Definition tanh_E (x : R) : R := exp (2 * (tanh_k * (x + tanh_a * x ^ 3))).
Definition dpsi_tanh (x : R) : R :=
  tanh_E x / (tanh_E x + 1) + x * tanh_k * (1 + 3 * tanh_a * x ^ 2) * (2 * tanh_E x / (tanh_E x + 1) ^ 2).

Theorem tanh_gelu_core : forall x, -6 <= x <= 6 -> Rabs (dpsi_tanh x) < 1.128994.
Proof.
  intros x Hx. unfold dpsi_tanh, tanh_E, tanh_k, tanh_a.
  apply Rabs_def1; interval with (i_prec 60, i_bisect x, i_taylor x, i_degree 8, i_depth 20).
Qed.

(** ** Monotonicity in [n] (§6.5). *)
Theorem ln_ge_ratio : forall x, 0 <= x -> x / (1 + x) <= ln (1 + x).
Proof.
  intros x Hx. set (y := / (1 + x)). assert (Hy : 0 < y) by (apply Rinv_0_lt_compat; lra).
  (* ln y <= y - 1, from 1 + ln y <= exp (ln y) = y *)
  pose proof (exp_ineq1_le (ln y)) as H. rewrite exp_ln in H by exact Hy.
  assert (ln (1 + x) = - ln y) by (unfold y; rewrite ln_Rinv by lra; ring).
  assert (x / (1 + x) = 1 - y) by (unfold y; field; lra).
  lra.
Qed.

(** The numerator of [d/dn ((u ln(vn+1) + w)/n)] is [<= 0]. *)
Theorem entropy_over_n_derivative_sign : forall u v w n, 0 <= u -> 0 <= v -> 0 <= w -> 0 < n ->
  u * (v * n / (v * n + 1) - ln (v * n + 1)) - w <= 0.
Proof.
  intros u v w n Hu Hv Hw Hn. assert (0 <= v * n) by nra.
  pose proof (ln_ge_ratio (v * n) H). rewrite Rplus_comm in H0.
  assert (u * (v * n / (v * n + 1) - ln (v * n + 1)) <= 0).
  { assert (v * n / (v * n + 1) - ln (v * n + 1) <= 0) by lra.
    replace 0 with (u * 0) by ring. apply Rmult_le_compat_l; lra. }
  lra.
Qed.

(** ** Chaining (Lemma C) and the one-step bound (Lemma C2): scalar steps. *)
Definition eps_k (D : R) (k : nat) : R := D / 2 ^ k.

Lemma eps_step : forall D k, eps_k D k = 2 * (eps_k D k - eps_k D (S k)).
Proof. intros D k. unfold eps_k. simpl. field. apply pow_nonzero. lra. Qed.

Lemma eps_kstar : forall D alpha k, eps_k D (S (S k)) < alpha -> eps_k D k < 4 * alpha.
Proof.
  intros D alpha k H. unfold eps_k in *. simpl in H.
  replace (D / (2 * (2 * 2 ^ k))) with (D / 2 ^ k / 4) in H by (field; apply pow_nonzero; lra).
  lra.
Qed.

(** Link [k]: Massart on [N_k^2] differences of norm [<= 3 sqrt n eps_k]:
    [(1/n) 3 sqrt n eps sqrt(2 ln N^2) = 6 eps sqrt(ln N / n)]. *)
Lemma link_constant : forall n eps N, 0 < n -> 1 <= N ->
  / n * (3 * sqrt n * eps) * sqrt (2 * ln (N ^ 2)) = 6 * eps * sqrt (ln N / n).
Proof.
  intros n eps N Hn HN.
  assert (Hl : 0 <= ln N) by (rewrite <- ln_1; destruct HN as [HN|HN]; [left; apply ln_increasing; lra | rewrite HN; lra]).
  assert (Hsn : 0 < sqrt n) by (apply sqrt_lt_R0; exact Hn).
  replace (ln (N ^ 2)) with (2 * ln N) by (simpl; rewrite Rmult_1_r, ln_mult by lra; ring).
  replace (2 * (2 * ln N)) with (2 * 2 * ln N) by ring.
  rewrite sqrt_mult by lra. rewrite sqrt_square by lra.
  rewrite sqrt_div_alt by exact Hn.
  replace n with (sqrt n * sqrt n) at 1 by (apply sqrt_sqrt; lra).
  field. lra.
Qed.

(** Lemma C2: Massart on at most [N] vectors of norm [<= sqrt n B/2]:
    [(1/n)(sqrt n B/2) sqrt(2 ln N) = (B/2) sqrt(2 ln N / n)]. *)
Lemma one_step_massart_constant : forall n B N, 0 < n -> 1 <= N ->
  / n * (sqrt n * (B / 2)) * sqrt (2 * ln N) = B / 2 * sqrt (2 * ln N / n).
Proof.
  intros n B N Hn HN.
  assert (Hsn : 0 < sqrt n) by (apply sqrt_lt_R0; exact Hn).
  rewrite sqrt_div_alt by exact Hn.
  replace n with (sqrt n * sqrt n) at 1 by (apply sqrt_sqrt; lra).
  field. lra.
Qed.
