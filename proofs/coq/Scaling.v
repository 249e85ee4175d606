(** * Power-of-two scaling

    Backs [proofs/enclosure.md] §5 ("Power-of-two scaling": exact upward;
    downward exact unless the result is subnormal, then off by at most
    [2^-1075]; the [exact] flag of the code) and
    [proofs/enclosure-tight.md] Lemma T1(c) (one or two downward factors:
    at most [eta] per entry); code: [certbound/enclose/_input.py]
    ([power_of_two_scaling]: [W * 2^k] or [np.ldexp(W, k)], and its [exact] test
    [|w| < 2^(-1022-k)]), [tight._scale_pow2]. *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core.
From Certbound Require Import FPModel.
Open Scope R_scope.

Lemma format_scale : forall x k, format x ->
  (x <> 0 -> (cexp radix2 fexp (x * bpow radix2 k) <= cexp radix2 fexp x + k)%Z) ->
  format (x * bpow radix2 k).
Proof.
  intros x k Hx Hc. rewrite Hx. unfold F2R. cbn [Fnum Fexp].
  rewrite Rmult_assoc, <- bpow_plus.
  change (IZR (Ztrunc (scaled_mantissa radix2 fexp x)) * bpow radix2 (cexp radix2 fexp x + k))
    with (F2R (Float radix2 (Ztrunc (scaled_mantissa radix2 fexp x)) (cexp radix2 fexp x + k))).
  apply generic_format_F2R. intros Hm. cbn [Fexp].
  assert (Hx0 : x <> 0).
  { intros E. apply Hm. rewrite E. unfold scaled_mantissa. rewrite Rmult_0_l. apply Ztrunc_IZR. }
  specialize (Hc Hx0). unfold F2R. cbn [Fnum Fexp]. rewrite bpow_plus, <- Rmult_assoc.
  change (IZR (Ztrunc (scaled_mantissa radix2 fexp x)) * bpow radix2 (cexp radix2 fexp x))
    with (F2R (Float radix2 (Ztrunc (scaled_mantissa radix2 fexp x)) (cexp radix2 fexp x))).
  rewrite <- Hx. exact Hc.
Qed.

Lemma cexp_scale : forall x k, x <> 0 ->
  cexp radix2 fexp (x * bpow radix2 k) = Z.max (mag radix2 x + k - 53) (-1074).
Proof.
  intros x k Hx. unfold cexp. rewrite mag_mult_bpow by exact Hx.
  unfold FLT_exp, prec, emin. reflexivity.
Qed.

(** Upward scaling ([k >= 0]) is exact (below overflow, which the code's
    choice [max|W 2^k| < 2] excludes). *)
Theorem scale_up_exact : forall x k, format x -> (0 <= k)%Z -> fl (x * bpow radix2 k) = x * bpow radix2 k.
Proof.
  intros x k Hx Hk. apply fl_exact, format_scale; [exact Hx|]. intros Hx0.
  rewrite cexp_scale by exact Hx0. unfold cexp, FLT_exp, prec, emin. lia.
Qed.

(** Any scaling whose result is a normal number ([>= 2^-1022] in magnitude)
    is exact. *)
Theorem scale_normal_exact : forall x k, format x ->
  bpow radix2 (-1022) <= Rabs (x * bpow radix2 k) -> fl (x * bpow radix2 k) = x * bpow radix2 k.
Proof.
  intros x k Hx Hn. apply fl_exact, format_scale; [exact Hx|]. intros Hx0.
  rewrite cexp_scale by exact Hx0.
  assert (Hm : (-1021 <= mag radix2 (x * bpow radix2 k))%Z) by (apply mag_ge_bpow; exact Hn).
  rewrite mag_mult_bpow in Hm by exact Hx0. unfold cexp, FLT_exp, prec, emin. lia.
Qed.

(** A rounded result below the normal range is off by at most [2^-1075 = eta/2]. *)
Theorem subnormal_error : forall z, Rabs z < bpow radix2 (-1022) -> Rabs (fl z - z) <= eta / 2.
Proof.
  intros z Hz. destruct (Req_dec z 0) as [->|Hz0].
  - rewrite fl_0, Rminus_0_r, Rabs_R0. pose proof eta_pos. lra.
  - unfold fl. eapply Rle_trans; [apply error_le_half_ulp; auto with typeclass_instances|].
    rewrite ulp_neq_0 by exact Hz0. unfold cexp.
    assert (Hm : (mag radix2 z <= -1022)%Z) by (apply mag_le_bpow; assumption).
    unfold FLT_exp, prec, emin. rewrite Z.max_r by lia. unfold eta. lra.
Qed.

(** So every scaling by a power of two has error at most [eta/2], and is
    exact unless the result is subnormal: the code's [exact] flag
    ([no nonzero |w| < 2^(-1022-k)]) is sound. *)
Theorem scale_error : forall x k, format x -> Rabs (fl (x * bpow radix2 k) - x * bpow radix2 k) <= eta / 2.
Proof.
  intros x k Hx. pose proof eta_pos.
  destruct (Rlt_le_dec (Rabs (x * bpow radix2 k)) (bpow radix2 (-1022))) as [Hs|Hn].
  - apply subnormal_error, Hs.
  - rewrite scale_normal_exact by assumption. rewrite Rminus_eq_0, Rabs_R0. lra.
Qed.

Theorem scale_exact_flag : forall x k, format x ->
  (x = 0 \/ bpow radix2 (-1022 - k) <= Rabs x) -> fl (x * bpow radix2 k) = x * bpow radix2 k.
Proof.
  intros x k Hx [->|H].
  - rewrite Rmult_0_l. apply fl_0.
  - apply scale_normal_exact; [exact Hx|]. rewrite Rabs_mult, (Rabs_pos_eq (bpow _ _)) by apply bpow_ge_0.
    replace (bpow radix2 (-1022)) with (bpow radix2 (-1022 - k) * bpow radix2 k)
      by (rewrite <- bpow_plus; f_equal; lia).
    apply Rmult_le_compat_r; [apply bpow_ge_0 | exact H].
Qed.

(** Lemma T1(c): two downward factors [2^j1], [2^j2] ([j1, j2 <= 0]) cost at
    most [eta] per entry. *)
Theorem two_downward_scalings : forall x j1 j2, format x -> (j1 <= 0)%Z -> (j2 <= 0)%Z ->
  Rabs (fl (fl (x * bpow radix2 j1) * bpow radix2 j2) - x * bpow radix2 (j1 + j2)) <= eta.
Proof.
  intros x j1 j2 Hx H1 H2. pose proof eta_pos.
  set (y := fl (x * bpow radix2 j1)).
  pose proof (scale_error x j1 Hx) as E1. fold y in E1.
  pose proof (scale_error y j2 (fl_format _)) as E2.
  assert (Hb : bpow radix2 j2 <= 1) by (change 1 with (bpow radix2 0); apply bpow_le; lia).
  rewrite bpow_plus, <- Rmult_assoc.
  replace (fl (y * bpow radix2 j2) - x * bpow radix2 j1 * bpow radix2 j2)
    with ((fl (y * bpow radix2 j2) - y * bpow radix2 j2) + (y - x * bpow radix2 j1) * bpow radix2 j2) by ring.
  eapply Rle_trans; [apply Rabs_triang|]. rewrite Rabs_mult, (Rabs_pos_eq (bpow _ j2)) by apply bpow_ge_0.
  assert (Rabs (y - x * bpow radix2 j1) * bpow radix2 j2 <= eta / 2 * 1)
    by (apply Rmult_le_compat; [apply Rabs_pos | apply bpow_ge_0 | exact E1 | exact Hb]).
  lra.
Qed.
