(** * Theorem G evaluated for all sigma_i in floats (gram mode)

    Backs [proofs/enclosure-gram.md] §1 (Lemma G.4: Theorem G's ends in
    floats, one step outward per operation) on top of [TheoremG.v] (whose
    theorem is reused as is) and [OneStep.v] (Lemma 10.1 of
    [proofs/enclosure.md] §10); code: [certbound/enclose/gram.py]
    ([theorem_g_float_bounds], [_outward_squares], [_outward_sqrt]).  At the
    end: Lemma G.2's quotient step ([enclosure-gram.md] §2,
    [abs_gram_norm_upper]).

    The code's operation sequence, one rounding per numpy operation
    ([FPModel.fl]), [np.nextafter] = Flocq's [succ]/[pred]:
    - from Arb, with [a], [b], [ee] the upper ends of alpha, beta, e (finite,
      [a < 1] checked in Arb): [c = float_upper(b + ee) >= b + ee],
      [grow = float_upper(1 + a) >= 1 + a],
      [shrink = max(float_lower(1 - a), 0.0)], so [0 <= shrink <= 1 - a]
      ([TheoremRFloat.clamp0_sound]); [c], [grow] finite, else Arb fallback;
    - [lv = sort(lam)] descending (exact; [lam i] of [TheoremG.v]);
      [(f_lo, f_hi) = (shrink, grow)] where [lv >= 0] (also [-0.0]),
      [(grow, shrink)] else;
    - [_outward_squares]: [pl = 0] where [lv == 0], else
      [pred(fl(lv * f_lo))]; [ph] dually with [succ]; [lsq = pl] if [c == 0]
      else [pred(fl(pl - c))]; [hsq = ph] if [c == 0] else [succ(fl(ph + c))]
      (the code returns None if some [hsq < 0]; the theorem needs no such
      test: Coq's [sqrt] is 0 on negatives and the bound still holds);
    - [_outward_sqrt]: [lo = pred(fl(sqrt lsq))] where [lsq > 0], else [0];
      [hi = 0] where [hsq == 0], else [succ(fl(sqrt hsq))];
    - [ldexp(lo, t)], [ldexp(hi, t)], accepted when every [hi2] is finite,
      every [lo] is [0] or has [lo2 > 2^-1022] (strict: [TheoremRFloat.v]'s
      [ldexp_tie_counterexample]) and every [hi] is [0] or has
      [hi2 >= 2^-1022]; otherwise [theorem_g_intervals] (Arb, [TheoremG.v]);
    - then the running max of the lower ends from below and the running min
      of the upper ends ([TheoremR.monotone_tightening]: [sigma] sorted).
    Overflow: as in [TheoremRFloat.v] (an infinite [hi] is rejected; a
    negative overflow of [lsq] gives [lo = 0]). *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core.
From Certbound Require Import FPModel Outward OneStep Scaling TheoremG TheoremRFloat.
Open Scope R_scope.

Local Notation succ := (succ radix2 fexp).
Local Notation pred := (pred radix2 fexp).

Section TheoremGFloat.
(** The data of [TheoremG.v] (same names, same hypotheses). *)
Variables (sW lG lH lam : nat -> R) (mu_min mu_max dU dB dE : R).
Hypothesis sW_nonneg : forall i, 0 <= sW i.
Hypothesis lG_sq : forall i, lG i = sW i ^ 2.
Hypothesis weyl_eig_U : 1 - dU <= mu_min /\ mu_min <= mu_max /\ mu_max <= 1 + dU.
Hypothesis ostrowski : forall i,
  (0 <= lam i -> mu_min * lam i <= lH i <= mu_max * lam i) /\
  (lam i < 0 -> mu_max * lam i <= lH i <= mu_min * lam i).
Hypothesis weyl_additive : forall i, Rabs (lG i - lH i) <= dE + dB.

(** [a], [b], [ee]: the upper ends of Arb's alpha, beta, e. *)
Variables a b ee : R.
Hypothesis Ha : dU <= a < 1.
Hypothesis Hb : dB <= b.
Hypothesis Hee : dE <= ee.

(** The three floats from Arb. *)
Variables c grow shrink : R.
Hypothesis c_ok : b + ee <= c.
Hypothesis grow_ok : 1 + a <= grow.
Hypothesis shrink_ok : 0 <= shrink <= 1 - a.

Definition f_lo (l : R) : R := if Rle_dec 0 l then shrink else grow.
Definition f_hi (l : R) : R := if Rle_dec 0 l then grow else shrink.

(** [_outward_squares]: a product with [lambda = +-0] and a shift by
    [c = 0] are exact and not stepped. *)
Definition pl (i : nat) : R := if Req_EM_T (lam i) 0 then 0 else pred (fl (lam i * f_lo (lam i))).
Definition ph (i : nat) : R := if Req_EM_T (lam i) 0 then 0 else succ (fl (lam i * f_hi (lam i))).
Definition lsq (i : nat) : R := if Req_EM_T c 0 then pl i else pred (fl (pl i - c)).
Definition hsq (i : nat) : R := if Req_EM_T c 0 then ph i else succ (fl (ph i + c)).
(** [_outward_sqrt]. *)
Definition g_lower_end (i : nat) : R := if Rlt_dec 0 (lsq i) then pred (fl (sqrt (lsq i))) else 0.
Definition g_upper_end (i : nat) : R := if Req_EM_T (hsq i) 0 then 0 else succ (fl (sqrt (hsq i))).

(** The squared float ends bracket Theorem G's [theta^- lambda - (beta+e)] and
    [theta^+ lambda + (beta+e)]. *)
Theorem g_squares_bracket : forall i,
  lsq i <= theta_lo a (lam i) * lam i - (b + ee) /\
  theta_hi a (lam i) * lam i + (b + ee) <= hsq i.
Proof.
  intros i.
  assert (Hpl : pl i <= theta_lo a (lam i) * lam i).
  { unfold pl, f_lo, theta_lo. destruct (Req_EM_T (lam i) 0) as [E|_].
    - rewrite E. destruct (Rle_dec 0 0); lra.
    - destruct (Rle_dec 0 (lam i)) as [Hp|Hn]; apply step_down.
      + assert (0 <= ((1 - a) - shrink) * lam i) by (apply Rmult_le_pos; lra). nra.
      + assert (0 <= (grow - (1 + a)) * (- lam i)) by (apply Rmult_le_pos; lra). nra. }
  assert (Hph : theta_hi a (lam i) * lam i <= ph i).
  { unfold ph, f_hi, theta_hi. destruct (Req_EM_T (lam i) 0) as [E|_].
    - rewrite E. destruct (Rle_dec 0 0); lra.
    - destruct (Rle_dec 0 (lam i)) as [Hp|Hn]; apply step_up.
      + assert (0 <= (grow - (1 + a)) * lam i) by (apply Rmult_le_pos; lra). nra.
      + assert (0 <= ((1 - a) - shrink) * (- lam i)) by (apply Rmult_le_pos; lra). nra. }
  unfold lsq, hsq. destruct (Req_EM_T c 0) as [E|_]; split.
  - lra.
  - lra.
  - apply step_down. lra.
  - apply step_up. lra.
Qed.

(** Hence the float ends enclose [sigma_i(W)] ([TheoremG.theorem_g]). *)
Theorem theorem_g_float : forall i, g_lower_end i <= sW i <= g_upper_end i.
Proof.
  intros i.
  pose proof (theorem_g sW lG lH lam mu_min mu_max dU dB dE sW_nonneg lG_sq weyl_eig_U ostrowski
                weyl_additive a b ee Ha Hb Hee i) as [_ [HG1 HG2]].
  destruct (g_squares_bracket i) as [H1 H2]. split.
  - unfold g_lower_end. destruct (Rlt_dec 0 (lsq i)) as [Hp|_]; [|apply sW_nonneg].
    apply Rle_trans with (2 := HG1). apply down_sqrt.
    apply Rle_trans with (theta_lo a (lam i) * lam i - (b + ee)); [exact H1 | apply Rmax_l].
  - apply Rle_trans with (1 := HG2). unfold g_upper_end. destruct (Req_EM_T (hsq i) 0) as [E|_].
    + (* [hsq = 0]: [h <= 0], so [sqrt h = 0] *)
      rewrite E in H2. rewrite sqrt_neg_0 by lra. lra.
    + apply up_sqrt. exact H2.
Qed.

Lemma g_lower_end_format : forall i, format (g_lower_end i).
Proof. intros i. unfold g_lower_end. destruct (Rlt_dec _ _); [apply down_format | apply format_0]. Qed.

Lemma g_upper_end_format : forall i, format (g_upper_end i).
Proof. intros i. unfold g_upper_end. destruct (Req_EM_T _ _); [apply format_0 | apply up_format]. Qed.

(** Scaling back with the code's tests: [lo = 0] or [lo2 > 2^-1022]
    (strict), [hi = 0] or [hi2 >= 2^-1022]. *)
Theorem theorem_g_float_scaled : forall i t,
  (g_lower_end i = 0 \/ bpow radix2 (-1022) < fl (g_lower_end i * bpow radix2 t)) ->
  (g_upper_end i = 0 \/ bpow radix2 (-1022) <= fl (g_upper_end i * bpow radix2 t)) ->
  fl (g_lower_end i * bpow radix2 t) <= sW i * bpow radix2 t <= fl (g_upper_end i * bpow radix2 t).
Proof.
  intros i t Hlo Hhi. pose proof (theorem_g_float i) as [H1 H2].
  pose proof (bpow_gt_0 radix2 t) as Ht. split.
  - destruct Hlo as [E|Hlo].
    + rewrite E, Rmult_0_l, fl_0. apply Rmult_le_pos; [apply sW_nonneg | lra].
    + assert (Hx : 0 <= g_lower_end i).
      { destruct (Rle_lt_dec 0 (g_lower_end i)) as [H|H]; [exact H|]. exfalso.
        assert (fl (g_lower_end i * bpow radix2 t) <= 0); [|pose proof (bpow_gt_0 radix2 (-1022)); lra].
        rewrite <- fl_0. apply fl_le. assert (0 < - g_lower_end i * bpow radix2 t) by (apply Rmult_lt_0_compat; lra).
        lra. }
      rewrite ldexp_lower_exact; [| apply g_lower_end_format | exact Hx | exact Hlo].
      apply Rmult_le_compat_r; lra.
  - apply Rle_trans with (g_upper_end i * bpow radix2 t); [apply Rmult_le_compat_r; lra|].
    destruct Hhi as [E|Hhi].
    + rewrite E, Rmult_0_l, fl_0. lra.
    + apply ldexp_upper_sound; [apply g_upper_end_format | exact Hhi].
Qed.
End TheoremGFloat.

(** ** Lemma G.2's quotients ([enclosure-gram.md] §2, *Evaluation*;
    [gram.abs_gram_norm_upper]): for [z >= 0], [x > 0],
    [z/x <= (fl(z/x) + eta/2)/(1 - u)], so [max_i z_i/x_i <= (r + eta)/(1 - u)]
    with [r = max_i fl(z_i/x_i)] (the code's Arb expression). *)
Theorem quotient_upper : forall z x, 0 <= z -> 0 < x -> z / x <= (fl (z / x) + eta / 2) / (1 - u).
Proof.
  intros z x Hz Hx. pose proof u_pos. pose proof u_lt_1.
  assert (Hq : 0 <= z / x) by (unfold Rdiv; apply Rmult_le_pos; [lra | left; apply Rinv_0_lt_compat; lra]).
  pose proof (fl_error_abs (z / x)) as E. rewrite (Rabs_pos_eq (z / x)) in E by exact Hq.
  apply Rabs_le_inv in E.
  apply Rmult_le_reg_r with (1 - u); [lra|]. unfold Rdiv at 2. rewrite Rmult_assoc, Rinv_l by lra. lra.
Qed.

Corollary quotient_max_upper : forall z x r, 0 <= z -> 0 < x -> fl (z / x) <= r ->
  z / x <= (r + eta) / (1 - u).
Proof.
  intros z x r Hz Hx Hr. pose proof u_pos. pose proof u_lt_1. pose proof eta_pos.
  eapply Rle_trans; [apply quotient_upper; assumption|].
  unfold Rdiv. apply Rmult_le_compat_r; [left; apply Rinv_0_lt_compat; lra | lra].
Qed.
