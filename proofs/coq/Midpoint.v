(** * The float midpoint of two float ends

    Backs [proofs/enclosure.md] §8 ("JSON forms", *Float ends*: "[mid] is
    the float nearest to [(l+h)/2], which is [fl(fl(l+h) * 1/2)] whenever
    [fl(l+h)] is finite ... Both ends are floats, so that nearest float lies
    in [[l,h]]"); code: [certbound/ball.py] ([float_interval_to_json]:
    [mid = m * 0.5] with [m = lo + hi] when finite, else
    [float(Fraction(lo) + Fraction(hi)) / 2)], CPython's correctly rounded
    [Fraction -> float], i.e. [fl((l+h)/2)] directly).

    If [|l + h| <= 2^-1021] the sum is exact (Flocq's
    [FLT_format_plus_small]) and only the halving rounds; otherwise
    [fl(l+h)] and its half are normal, where rounding commutes with the
    scaling by [1/2] ([round_scale_normal]) and the halving is exact
    ([Scaling.scale_normal_exact]).  (Flocq has no overflow: where IEEE's
    [lo + hi] overflows the code takes the exact route, whose value is the
    same [fl((l+h)/2)].) *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core Plus_error.
From Certbound Require Import FPModel Scaling.
Open Scope R_scope.

(** Rounding commutes with scaling by [2^k] when [x] and [x 2^k] are both
    in the normal range. *)
Lemma round_scale_normal : forall x k,
  bpow radix2 (-1022) <= Rabs x -> bpow radix2 (-1022) <= Rabs (x * bpow radix2 k) ->
  fl (x * bpow radix2 k) = fl x * bpow radix2 k.
Proof.
  intros x k H1 H2.
  assert (Hx : x <> 0) by (intros E; rewrite E, Rabs_R0 in H1; pose proof (bpow_gt_0 radix2 (-1022)); lra).
  assert (Hm1 : (-1021 <= mag radix2 x)%Z) by (apply mag_ge_bpow; exact H1).
  assert (Hm2 : (-1021 <= mag radix2 (x * bpow radix2 k))%Z) by (apply mag_ge_bpow; exact H2).
  rewrite mag_mult_bpow in Hm2 by exact Hx.
  assert (Hc : cexp radix2 fexp (x * bpow radix2 k) = (cexp radix2 fexp x + k)%Z).
  { rewrite cexp_scale by exact Hx. unfold cexp, FLT_exp, prec, emin. lia. }
  unfold fl, round, F2R, scaled_mantissa. cbn [Fnum Fexp]. rewrite Hc.
  replace (x * bpow radix2 k * bpow radix2 (- (cexp radix2 fexp x + k)))
    with (x * bpow radix2 (- cexp radix2 fexp x)).
  - rewrite bpow_plus. ring.
  - rewrite Rmult_assoc, <- bpow_plus. f_equal. f_equal. lia.
Qed.

Lemma half_bpow : / 2 = bpow radix2 (-1).
Proof. reflexivity. Qed.

(** [fl(fl(l + h) * 0.5) = fl((l + h)/2)] for all floats [l], [h]. *)
Theorem float_midpoint : forall l h, format l -> format h ->
  fl (fl (l + h) * / 2) = fl ((l + h) / 2).
Proof.
  intros l h Fl Fh. unfold Rdiv. rewrite half_bpow.
  destruct (Rle_lt_dec (Rabs (l + h)) (bpow radix2 (-1021))) as [Hs|Hb].
  - rewrite (fl_exact (l + h)); [reflexivity|].
    apply FLT_format_plus_small; auto with typeclass_instances.
  - assert (Hn : format (bpow radix2 (-1021)))
      by (apply generic_format_bpow; unfold FLT_exp, prec, emin; simpl; lia).
    assert (Hf : bpow radix2 (-1021) <= Rabs (fl (l + h))).
    { pose proof (bpow_gt_0 radix2 (-1021)). destruct (Rle_lt_dec 0 (l + h)) as [Hp|Hng].
      - rewrite Rabs_pos_eq in Hb by exact Hp.
        assert (bpow radix2 (-1021) <= fl (l + h)) by (rewrite <- (fl_exact _ Hn); apply fl_le; lra).
        rewrite Rabs_pos_eq; lra.
      - rewrite Rabs_left in Hb by exact Hng.
        assert (fl (l + h) <= - bpow radix2 (-1021))
          by (rewrite <- (fl_exact _ (generic_format_opp _ _ _ Hn)); apply fl_le; lra).
        rewrite Rabs_left1; lra. }
    assert (Hhalf : forall y, bpow radix2 (-1021) <= Rabs y -> bpow radix2 (-1022) <= Rabs (y * bpow radix2 (-1))).
    { intros y Hy. rewrite Rabs_mult, (Rabs_pos_eq (bpow _ _)) by apply bpow_ge_0.
      replace (bpow radix2 (-1022)) with (bpow radix2 (-1021) * bpow radix2 (-1)) by (rewrite <- bpow_plus; reflexivity).
      apply Rmult_le_compat_r; [apply bpow_ge_0 | exact Hy]. }
    assert (Hb' : bpow radix2 (-1021) <= Rabs (l + h)) by lra.
    rewrite (round_scale_normal (l + h) (-1)).
    + apply scale_normal_exact; [apply fl_format | apply Hhalf, Hf].
    + apply Rle_trans with (bpow radix2 (-1021)); [apply bpow_le; lia | exact Hb'].
    + apply Hhalf, Hb'.
Qed.

(** Hence [mid] lies in [[l, h]] (the float nearest to a point of
    [[l, h]], whose ends are floats). *)
Corollary float_midpoint_between : forall l h, format l -> format h -> l <= h ->
  l <= fl (fl (l + h) * / 2) <= h.
Proof.
  intros l h Fl Fh Hlh. rewrite float_midpoint by assumption.
  split.
  - rewrite <- (fl_exact l Fl) at 1. apply fl_le. lra.
  - rewrite <- (fl_exact h Fh) at 2. apply fl_le. lra.
Qed.
