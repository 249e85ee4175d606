(** * Theorem R (and Lemma P) evaluated for all sigma_i in floats

    Backs [proofs/enclosure.md] §10 ("Theorem R and Lemma P are then
    evaluated for all sigma_i at once: lower ends pred(pred(s_(i) l) - e) ...,
    upper ends succ(succ(s_(i) h) + e), clamped at 0"; the [ldexp] scaling
    back of §5) on top of [TheoremR.v] (§1, whose theorem is reused as is);
    code: [certbound/enclose/svd.py] ([theorem_r_float_bounds],
    [_theorem_r_factors]) and the same scalar step in
    [certbound/enclose/product.py] ([_sqrt_product_bounds],
    [_core_fast_stacked], [_certify_stack], [_certify_stack_gram], [_finish],
    [_finish_stack]).

    The code's operation sequence, one rounding per numpy operation
    ([FPModel.fl]) and [np.nextafter] = Flocq's [succ]/[pred] ([OneStep.v]):
    - [_theorem_r_factors]: Arb balls of [sqrt((1-a)(1-b))], [sqrt((1+a)(1+b))]
      and [ee], from the upper ends [a], [b], [ee] of the balls alpha, beta,
      e, after Arb has checked [a < 1], [b < 1] and finiteness;
    - [dn = max(float_lower(.), 0.0)], [upf = float_upper(.)],
      [ef = float_upper(ee)] ([Outward.v]: [float_lower]/[float_upper] are
      outward; Arb's containment of the exact value is F6 of §9, a
      hypothesis here: [dn_ok], [upf_ok], [ef_ok]);
    - [sv = sort(|s|)] descending: exact, [sv[i] = s_(i)];
    - [lo = max(nextafter(nextafter(sv*dn, -inf) - ef, -inf), 0.0)]:
      [Rmax 0 (pred (fl (pred (fl (sv i * dn)) - ef)))];
    - [hi = nextafter(nextafter(sv*upf, +inf) + ef, +inf)]:
      [succ (fl (succ (fl (sv i * upf)) + ef))];
    - [lo2, hi2 = ldexp(lo, t), ldexp(hi, t)]: [fl (lo * 2^t)], [fl (hi * 2^t)]
      (C's [ldexp] is correctly rounded), accepted when every [hi2] is finite
      and [>= 2^-1022] and every [lo] is [0] or has [lo2 >= 2^-1022];
      otherwise the Arb evaluation [theorem_r_intervals] ([TheoremR.v]) is
      used instead.
    Lemma P's float steps in [product.py] are the same with [sv] replaced by
    float bounds [lc <= sigma_i(C) <= hc] of the core ([sl], [su] below) and
    [dn], [upf] from [_sqrt_product_bounds] ([sqrt_product_bounds_sound]).

    Overflow.  Flocq's rounding has no overflow; numpy's agrees with it
    whenever its result is finite.  On the upper path every step is
    nondecreasing and [inf] (or [nan]) propagates to [hi2], which the code
    rejects, so an accepted [hi2] had only finite intermediates.  On the
    lower path an overflow gives [-inf] (below the Flocq value, see
    [lower_end_any_below]), which the clamp turns into [0].

    The [ldexp] test of the LOWER ends must be strict.  [lo2 >= 2^-1022]
    does not make [ldexp(lo, t)] exact: [ldexp_tie_counterexample]
    ([lo = 1 - 2^-53], [t = -1022]: the tie [2^-1022 - 2^-1075] rounds up to
    [2^-1022]), so a lower end could exceed the proven one by [2^-1075]
    (found here; the code tested [>=] until 65c2284 / 705abd7).  Sound
    tests, proved below: [lo2 > 2^-1022] ([ldexp_lower_exact]: what
    [svd.theorem_r_float_bounds], [product._finish], [_finish_stack] and
    [gram.theorem_g_float_bounds] now test, as [ball.py]'s
    [_float_endpoint] and [Outward.ldexp_exact_above_normal]) or the
    unscaled [lo >= 2^(-1022-t)] ([Scaling.scale_exact_flag]); the
    upper-end test [hi2 >= 2^-1022] is sound ([ldexp_upper_sound]). *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core Sterbenz.
From Certbound Require Import FPModel Outward OneStep Scaling TheoremR.
Open Scope R_scope.

Local Notation succ := (succ radix2 fexp).
Local Notation pred := (pred radix2 fexp).

(** [max(v, 0.0)] of an extended float [v] ([-inf] gives [0]). *)
Definition clamp0 (v : ext) : R :=
  match v with Fin x => Rmax x 0 | NInf => 0 | PInf => 0 end.

(** [dn = max(float_lower(ball), 0.0)]: for a ball containing [q >= 0]
    ([float_lower_sound] gives [ext_le_R v q]), [0 <= dn <= q]. *)
Lemma clamp0_sound : forall v q, 0 <= q -> ext_le_R v q -> 0 <= clamp0 v <= q.
Proof.
  intros v q Hq H. destruct v as [x| |]; simpl in *; [| contradiction | lra].
  split; [apply Rmax_r | apply Rmax_lub; lra].
Qed.

(** ** Scaling back ([ldexp], §5; [Scaling.v]). *)
Lemma min_normal_format : format (bpow radix2 (-1022)).
Proof. apply generic_format_bpow. unfold FLT_exp, prec, emin. simpl. lia. Qed.

(** Upper ends: [hi2 >= 2^-1022] implies [hi 2^t <= hi2] (exact when
    [hi 2^t] is normal; otherwise [hi 2^t < 2^-1022 <= hi2]). *)
Theorem ldexp_upper_sound : forall x t, format x ->
  bpow radix2 (-1022) <= fl (x * bpow radix2 t) -> x * bpow radix2 t <= fl (x * bpow radix2 t).
Proof.
  intros x t Hx H.
  destruct (Rle_lt_dec (bpow radix2 (-1022)) (Rabs (x * bpow radix2 t))) as [Hn|Hs].
  - rewrite scale_normal_exact by assumption. lra.
  - apply Rabs_lt_inv in Hs. lra.
Qed.

(** Lower ends: [lo2 > 2^-1022] (strict) makes [ldexp] exact. *)
Theorem ldexp_lower_exact : forall x t, format x -> 0 <= x ->
  bpow radix2 (-1022) < fl (x * bpow radix2 t) -> fl (x * bpow radix2 t) = x * bpow radix2 t.
Proof.
  intros x t Hx Hx0 H. apply scale_normal_exact; [exact Hx|].
  pose proof (bpow_gt_0 radix2 t).
  rewrite Rabs_pos_eq by (apply Rmult_le_pos; lra).
  destruct (Rle_lt_dec (bpow radix2 (-1022)) (x * bpow radix2 t)) as [Hn|Hs]; [exact Hn|].
  exfalso. assert (fl (x * bpow radix2 t) <= bpow radix2 (-1022)); [|lra].
  rewrite <- (fl_exact _ min_normal_format). apply fl_le. lra.
Qed.

(** The code's non-strict test is not enough: [1 - 2^-53] is a float, and
    [ldexp(1 - 2^-53, -1022)] is [2^-1022], above the exact
    [2^-1022 - 2^-1075] (a tie, rounded to the even [2^52 2^-1074]). *)
Theorem ldexp_tie_counterexample :
  let lo := 1 - bpow radix2 (-53) in
  format lo /\ fl (lo * bpow radix2 (-1022)) = bpow radix2 (-1022) /\
  lo * bpow radix2 (-1022) < bpow radix2 (-1022).
Proof.
  intros lo.
  assert (Elo : lo = IZR (2 ^ 53 - 1) * bpow radix2 (-53)).
  { unfold lo. rewrite minus_IZR. change (IZR (2 ^ 53)) with (bpow radix2 53).
    rewrite Rmult_minus_distr_r, <- bpow_plus. replace (53 + -53)%Z with 0%Z by reflexivity. simpl bpow. lra. }
  assert (Hx : lo * bpow radix2 (-1022) = IZR (2 ^ 53 - 1) * bpow radix2 (-1075)).
  { rewrite Elo, Rmult_assoc, <- bpow_plus. reflexivity. }
  split; [|split].
  - rewrite Elo. apply generic_format_FLT.
    apply FLT_spec with (f := Float radix2 (2 ^ 53 - 1) (-53)); [reflexivity| |].
    + cbn [Fnum]. unfold prec. reflexivity.
    + simpl. unfold emin. lia.
  - rewrite Hx. unfold fl, round, F2R, scaled_mantissa, cexp. cbn [Fnum Fexp].
    set (x := IZR (2 ^ 53 - 1) * bpow radix2 (-1075)).
    assert (Hmag : mag radix2 x = (-1022)%Z :> Z).
    { apply mag_unique_pos. unfold x. split.
      - replace (-1022 - 1)%Z with (52 + (-1075))%Z by lia. rewrite bpow_plus.
        apply Rmult_le_compat_r; [apply bpow_ge_0|]. change (bpow radix2 52) with (IZR (2 ^ 52)).
        apply IZR_le, Z.leb_le. reflexivity.
      - replace (-1022)%Z with (53 + (-1075))%Z by lia. rewrite bpow_plus.
        apply Rmult_lt_compat_r; [apply bpow_gt_0|]. change (bpow radix2 53) with (IZR (2 ^ 53)).
        apply IZR_lt, Z.ltb_lt. reflexivity. }
    rewrite Hmag. unfold FLT_exp, prec, emin.
    replace (Z.max (-1022 - 53) (-1074)) with (-1074)%Z by reflexivity.
    assert (Hm : x * bpow radix2 (- (-1074)) = IZR (2 ^ 52) - / 2).
    { unfold x. rewrite Rmult_assoc, <- bpow_plus. replace (-1075 + - -1074)%Z with (-1)%Z by reflexivity.
      rewrite minus_IZR. change (IZR (2 ^ 53)) with (2 * IZR (2 ^ 52)). simpl bpow. lra. }
    rewrite Hm. unfold Znearest.
    rewrite (Zfloor_imp (2 ^ 52 - 1)).
    2: { rewrite minus_IZR. replace (2 ^ 52 - 1 + 1)%Z with (2 ^ 52)%Z by reflexivity. lra. }
    rewrite minus_IZR. replace (IZR (2 ^ 52) - / 2 - (IZR (2 ^ 52) - 1)) with (/ 2) by lra.
    rewrite Rcompare_Eq by reflexivity.
    change (negb (Z.even (2 ^ 52 - 1))) with true. cbv iota.
    rewrite (Zceil_imp (2 ^ 52)).
    2: { rewrite minus_IZR. split; lra. }
    change (IZR (2 ^ 52)) with (bpow radix2 52). rewrite <- bpow_plus. reflexivity.
  - pose proof (bpow_gt_0 radix2 (-1022)). unfold lo.
    pose proof (bpow_gt_0 radix2 (-53)). nra.
Qed.

(** [product._sqrt_product_bounds] for floats [0 <= a, b < 1]:
    [lo = down(sqrt(down(down(1 - a) * down(1 - b))))], then
    [where(isfinite(lo), max(lo, 0), 0)] (numpy's [sqrt] of a negative is
    [nan]; Coq's is [0], and both end as [0]);
    [hi = up(sqrt(up(up(1 + a) * up(1 + b))))]. *)
Lemma one_minus_pos : forall a, format a -> 0 <= a < 1 -> 0 < fl (1 - a).
Proof.
  intros a Ha Hr. destruct (Rle_lt_dec (/ 2) a) as [H|H].
  - rewrite fl_exact; [lra|]. apply sterbenz; auto with typeclass_instances; [exact format_1 | lra].
  - assert (Hh : format (/ 2)).
    { change (/ 2) with (bpow radix2 (-1)). apply generic_format_bpow. unfold FLT_exp, prec, emin. simpl. lia. }
    assert (fl (/ 2) <= fl (1 - a)) by (apply fl_le; lra). rewrite fl_exact in H0 by exact Hh. lra.
Qed.

Theorem sqrt_product_bounds_sound : forall a b, format a -> format b -> 0 <= a < 1 -> 0 <= b < 1 ->
  let lo := pred (fl (sqrt (pred (fl (pred (fl (1 - a)) * pred (fl (1 - b))))))) in
  let hi := succ (fl (sqrt (succ (fl (succ (fl (1 + a)) * succ (fl (1 + b))))))) in
  0 <= Rmax lo 0 <= sqrt ((1 - a) * (1 - b)) /\ sqrt ((1 + a) * (1 + b)) <= hi.
Proof.
  intros a b Fa Fb Ha Hb lo hi.
  pose proof (down_pos_nonneg _ (one_minus_pos a Fa Ha)).
  pose proof (down_pos_nonneg _ (one_minus_pos b Fb Hb)).
  pose proof (sqrt_pos ((1 - a) * (1 - b))).
  split; [split; [apply Rmax_r | apply Rmax_lub; [|exact H1]]|].
  - unfold lo. apply down_sqrt, down_mul; split; try apply step_down; lra.
  - unfold hi. apply up_sqrt, up_mul; split; try apply step_up; lra.
Qed.

Section TheoremRFloat.
(** The data of [TheoremR.v] (same names, same hypotheses). *)
Variables (sW sWt s : nat -> R) (nX mX nY mY dX dY dW : R).
Hypothesis sW_nonneg : forall i, 0 <= sW i.
Hypothesis s_nonneg : forall i, 0 <= s i.
Hypothesis norms_nonneg : 0 <= nX /\ 0 <= mX /\ 0 <= nY /\ 0 <= mY.
Hypothesis weyl_singular : forall i, Rabs (sW i - sWt i) <= dW.
Hypothesis weyl_eig_X : nX ^ 2 <= 1 + dX /\ 1 - dX <= mX ^ 2.
Hypothesis weyl_eig_Y : nY ^ 2 <= 1 + dY /\ 1 - dY <= mY ^ 2.
Hypothesis product_bounds : forall i, mX * mY * s i <= sWt i <= nX * nY * s i.

(** [a], [b], [ee]: the upper ends of Arb's alpha, beta, e. *)
Variables a b ee : R.
Hypothesis Ha : dX <= a < 1.
Hypothesis Hb : dY <= b < 1.
Hypothesis Hee : dW <= ee.

(** Float bounds of the [s_(i)]: [sl = su = sv] in [svd.py]; the core's
    [lc], [hc] in [product.py]. *)
Variables sl su : nat -> R.
Hypothesis s_bounds : forall i, sl i <= s i <= su i.

(** The floats [dn], [upf], [ef]. *)
Variables dn upf ef : R.
Hypothesis dn_ok : 0 <= dn <= sqrt ((1 - a) * (1 - b)).
Hypothesis upf_ok : sqrt ((1 + a) * (1 + b)) <= upf.
Hypothesis ef_ok : ee <= ef.

Definition lower_pre (i : nat) : R := pred (fl (pred (fl (sl i * dn)) - ef)).
Definition lower_end (i : nat) : R := Rmax 0 (lower_pre i).
Definition upper_end (i : nat) : R := succ (fl (succ (fl (su i * upf)) + ef)).

(** The float ends bracket Theorem R's interval (both directed steps and
    the clamp at 0). *)
Theorem float_ends_bracket : forall i,
  lower_end i <= Rmax 0 (s i * sqrt ((1 - a) * (1 - b)) - ee) /\
  s i * sqrt ((1 + a) * (1 + b)) + ee <= upper_end i.
Proof.
  intros i. destruct (s_bounds i) as [Hl Hu]. pose proof (s_nonneg i).
  pose proof (sqrt_pos ((1 + a) * (1 + b))). split.
  - unfold lower_end, lower_pre. apply Rle_max_compat_l.
    apply down_sub; [|lra]. apply step_down.
    apply Rle_trans with (s i * dn); [apply Rmult_le_compat_r; lra|].
    apply Rmult_le_compat_l; lra.
  - unfold upper_end. apply up_add; [|lra]. apply up_mul; lra.
Qed.

(** Hence the float ends enclose [sigma_i(W)] ([TheoremR.theorem_r]). *)
Theorem theorem_r_float : forall i, lower_end i <= sW i <= upper_end i.
Proof.
  intros i.
  pose proof (theorem_r sW sWt s nX mX nY mY dX dY dW sW_nonneg s_nonneg norms_nonneg weyl_singular
                weyl_eig_X weyl_eig_Y product_bounds a b ee Ha Hb Hee i) as [HR1 HR2].
  destruct (float_ends_bracket i) as [H1 H2]. lra.
Qed.

(** numpy's lower path gives the Flocq value or, after a negative overflow,
    [-inf]; anything below the Flocq value clamps to a valid lower end. *)
Theorem lower_end_any_below : forall i v, ext_le_R v (lower_pre i) -> clamp0 v <= sW i.
Proof.
  intros i v Hv. pose proof (theorem_r_float i) as [H _]. unfold lower_end in H.
  pose proof (sW_nonneg i).
  destruct v as [x| |]; simpl in *; [| contradiction | lra].
  apply Rmax_lub; [|lra]. apply Rle_trans with (Rmax 0 (lower_pre i)); [apply Rle_trans with (lower_pre i); [exact Hv | apply Rmax_r] | exact H].
Qed.

(** Scaling back by [2^t] ([ldexp]) with the code's acceptance tests
    (with the strict test for lower ends, see the FINDING above): the
    scaled float ends enclose [2^t sigma_i(W)], the singular values of
    the unscaled matrix. *)
Lemma lower_end_format : forall i, format (lower_end i).
Proof.
  intros i. unfold lower_end, Rmax. destruct (Rle_dec 0 (lower_pre i)); [apply down_format | apply format_0].
Qed.

Lemma upper_end_format : forall i, format (upper_end i).
Proof. intros i. apply up_format. Qed.

Theorem theorem_r_float_scaled : forall i t,
  (lower_end i = 0 \/ bpow radix2 (-1022) < fl (lower_end i * bpow radix2 t)) ->
  bpow radix2 (-1022) <= fl (upper_end i * bpow radix2 t) ->
  fl (lower_end i * bpow radix2 t) <= sW i * bpow radix2 t <= fl (upper_end i * bpow radix2 t).
Proof.
  intros i t Hlo Hhi. pose proof (theorem_r_float i) as [H1 H2].
  pose proof (bpow_gt_0 radix2 t) as Ht. split.
  - destruct Hlo as [E|Hlo].
    + rewrite E, Rmult_0_l, fl_0. apply Rmult_le_pos; [apply sW_nonneg | lra].
    + rewrite ldexp_lower_exact; [| apply lower_end_format | apply Rmax_l | exact Hlo].
      apply Rmult_le_compat_r; lra.
  - apply Rle_trans with (upper_end i * bpow radix2 t); [apply Rmult_le_compat_r; lra|].
    apply ldexp_upper_sound; [apply upper_end_format | exact Hhi].
Qed.
End TheoremRFloat.

(** [svd.theorem_r_float_bounds]: [sl = su = sv = s_(i)],
    [dn = max(float_lower(sqrt((1-a)(1-b))), 0.0)] ([v] is [float_lower]'s
    result, [Outward.float_lower_sound] with Arb's containment F6), [upf],
    [ef] from [float_upper]. *)
Corollary theorem_r_float_svd :
  forall (sW sWt s : nat -> R) (nX mX nY mY dX dY dW : R),
  (forall i, 0 <= sW i) -> (forall i, 0 <= s i) -> 0 <= nX /\ 0 <= mX /\ 0 <= nY /\ 0 <= mY ->
  (forall i, Rabs (sW i - sWt i) <= dW) ->
  nX ^ 2 <= 1 + dX /\ 1 - dX <= mX ^ 2 -> nY ^ 2 <= 1 + dY /\ 1 - dY <= mY ^ 2 ->
  (forall i, mX * mY * s i <= sWt i <= nX * nY * s i) ->
  forall a b ee, dX <= a < 1 -> dY <= b < 1 -> dW <= ee ->
  forall (v : ext) upf ef,
  ext_le_R v (sqrt ((1 - a) * (1 - b))) -> sqrt ((1 + a) * (1 + b)) <= upf -> ee <= ef ->
  forall i, lower_end s (clamp0 v) ef i <= sW i <= upper_end s upf ef i.
Proof.
  intros sW sWt s nX mX nY mY dX dY dW H1 H2 H3 H4 H5 H6 H7 a b ee Ha Hb Hee v upf ef Hv Hu He i.
  apply (theorem_r_float sW sWt s nX mX nY mY dX dY dW H1 H2 H3 H4 H5 H6 H7 a b ee Ha Hb Hee s s);
    [intros j; lra | apply clamp0_sound; [apply sqrt_pos | exact Hv] | exact Hu | exact He].
Qed.

(** Lemma P in [product.py] ([_core_fast_stacked] for the core with
    [s = sorted |s|], and [_certify_stack] / [_certify_stack_gram] for the
    product with [s i = sigma_i(C)], [lc <= sigma_i(C) <= hc] from the core's
    certificate, [eps] the float residual bound): the factors [dn], [upf] of
    [_sqrt_product_bounds] for float bounds [a = alpha_A], [b = alpha_B];
    TheoremR's data are then those of §6 ([X = Q_A], [Y = Q_B],
    [Wt = Q_A C Q_B^T]). *)
Corollary lemma_p_float :
  forall (sW sWt s : nat -> R) (nX mX nY mY dX dY dW : R),
  (forall i, 0 <= sW i) -> (forall i, 0 <= s i) -> 0 <= nX /\ 0 <= mX /\ 0 <= nY /\ 0 <= mY ->
  (forall i, Rabs (sW i - sWt i) <= dW) ->
  nX ^ 2 <= 1 + dX /\ 1 - dX <= mX ^ 2 -> nY ^ 2 <= 1 + dY /\ 1 - dY <= mY ^ 2 ->
  (forall i, mX * mY * s i <= sWt i <= nX * nY * s i) ->
  forall a b eps, format a -> format b -> 0 <= a -> 0 <= b -> dX <= a < 1 -> dY <= b < 1 -> dW <= eps ->
  forall lc hc : nat -> R, (forall i, lc i <= s i <= hc i) ->
  let dn := Rmax (pred (fl (sqrt (pred (fl (pred (fl (1 - a)) *
                                                                   pred (fl (1 - b)))))))) 0 in
  let upf := succ (fl (sqrt (succ (fl (succ (fl (1 + a)) *
                                                                succ (fl (1 + b))))))) in
  forall i, lower_end lc dn eps i <= sW i <= upper_end hc upf eps i.
Proof.
  intros sW sWt s nX mX nY mY dX dY dW H1 H2 H3 H4 H5 H6 H7 a b eps Fa Fb Ha0 Hb0 Ha Hb He lc hc Hc dn upf i.
  destruct (sqrt_product_bounds_sound a b Fa Fb ltac:(lra) ltac:(lra)) as [Hdn Hupf].
  apply (theorem_r_float sW sWt s nX mX nY mY dX dY dW H1 H2 H3 H4 H5 H6 H7 a b eps Ha Hb He lc hc Hc dn upf eps);
    [exact Hdn | exact Hupf | lra].
Qed.

(** Lemma P-G ([product._certify_stack_gram], §11): [Q = S R^-1] exactly,
    so the factor residuals vanish, [W = Q_A C Q_B^T] ([dW = 0]) and the code
    steps only once: [lo = max(down(lc * dn), 0)], [hi = up(hc * upf)]. *)
Corollary lemma_pg_float :
  forall (sW sWt s : nat -> R) (nX mX nY mY dX dY dW : R),
  (forall i, 0 <= sW i) -> (forall i, 0 <= s i) -> 0 <= nX /\ 0 <= mX /\ 0 <= nY /\ 0 <= mY ->
  (forall i, Rabs (sW i - sWt i) <= dW) ->
  nX ^ 2 <= 1 + dX /\ 1 - dX <= mX ^ 2 -> nY ^ 2 <= 1 + dY /\ 1 - dY <= mY ^ 2 ->
  (forall i, mX * mY * s i <= sWt i <= nX * nY * s i) ->
  forall a b, dX <= a < 1 -> dY <= b < 1 -> dW <= 0 ->
  forall (lc hc : nat -> R) dn upf, (forall i, lc i <= s i <= hc i) ->
  0 <= dn <= sqrt ((1 - a) * (1 - b)) -> sqrt ((1 + a) * (1 + b)) <= upf ->
  forall i, Rmax (pred (fl (lc i * dn))) 0 <= sW i <= succ (fl (hc i * upf)).
Proof.
  intros sW sWt s nX mX nY mY dX dY dW H1 H2 H3 H4 H5 H6 H7 a b Ha Hb He lc hc dn upf Hc Hdn Hupf i.
  pose proof (theorem_r sW sWt s nX mX nY mY dX dY dW H1 H2 H3 H4 H5 H6 H7 a b 0 Ha Hb He i) as [HR1 HR2].
  destruct (Hc i) as [Hl Hu]. pose proof (H2 i). pose proof (H1 i).
  pose proof (sqrt_pos ((1 + a) * (1 + b))).
  split.
  - apply Rmax_lub; [|lra]. apply Rle_trans with (Rmax 0 (s i * sqrt ((1 - a) * (1 - b)) - 0)); [|exact HR1].
    apply Rle_trans with (s i * sqrt ((1 - a) * (1 - b)) - 0); [|apply Rmax_r].
    rewrite Rminus_0_r. apply step_down.
    apply Rle_trans with (s i * dn); [apply Rmult_le_compat_r; lra | apply Rmult_le_compat_l; lra].
  - apply Rle_trans with (s i * sqrt ((1 + a) * (1 + b)) + 0); [exact HR2|].
    rewrite Rplus_0_r. apply up_mul; lra.
Qed.
