(** * Error-free transformations of tight mode

    Backs [proofs/enclosure-tight.md] §2: Lemma T2 (ExtractScalar,
    [tight._extract], [tight.split_error_free]), Lemma T3 (every classical
    evaluation of a product of parts is exact, [tight.bits_per_part] and the
    leading GEMMs of [gram_deviation_bound_tight],
    [residual_norm_bound_tight]) and Lemma T4 (Dekker's TwoProduct with
    Veltkamp's splitting, [tight._two_product]).  Corollary T2' (two levels),
    Lemmas T5, T6 and the matrix assembly of Theorems T-Gram / T-Res are
    prose. *)

From Coq Require Import Reals Psatz List.
From Flocq Require Import Core Plus_error Sterbenz.
From Flocq Require Pff.Pff2Flocq.
From Certbound Require Import FPModel Summation DotProduct.
Open Scope R_scope.

Lemma IZR_pow2 : forall n : Z, (0 <= n)%Z -> IZR (2 ^ n) = bpow radix2 n.
Proof. intros n Hn. apply (IZR_Zpower radix2). exact Hn. Qed.

Lemma format_mult_bpow : forall (N e : Z), (Z.abs N <= 2 ^ 53)%Z -> (-1074 <= e)%Z ->
  format (IZR N * bpow radix2 e).
Proof.
  intros N e HN He.
  destruct (Z.eq_dec (Z.abs N) (2 ^ 53)) as [E|E].
  - (* N = +-2^53: a power of two *)
    assert (IZR N = IZR (2 ^ 53) \/ IZR N = - IZR (2 ^ 53)) as [H|H].
    { destruct (Z.abs_spec N) as [[_ H]|[_ H]]; rewrite H in E; [left|right]; rewrite <- E; [|rewrite opp_IZR; ring].
      all: f_equal; lia. }
    + rewrite H, (IZR_pow2 53) by lia. rewrite <- bpow_plus. apply generic_format_bpow.
      unfold FLT_exp, prec, emin. lia.
    + rewrite H, (IZR_pow2 53) by lia. rewrite Ropp_mult_distr_l_reverse, <- bpow_plus.
      apply generic_format_opp. apply generic_format_bpow. unfold FLT_exp, prec, emin. lia.
  - apply generic_format_FLT. apply FLT_spec with (f := Float radix2 N e); [reflexivity| |].
    + cbn [Fnum]. unfold prec. change (radix2 ^ 53)%Z with (2 ^ 53)%Z. lia.
    + cbn [Fexp]. unfold emin. lia.
Qed.

(** ** Lemma T2 (ExtractScalar): [t = fl(sigma + a)], [q = fl(t - sigma)],
    [r = fl(a - q)] with [sigma = 2^rho], [rho = mu + 53 - b]. *)
Section Extract.
Variables b mu : Z.
Hypothesis Hb : (1 <= b <= 26)%Z.
Hypothesis Hmu : (-537 <= mu - b)%Z.
Let rho := (mu + 53 - b)%Z.
Let sigma := bpow radix2 rho.
Variable a : R.
Hypothesis Ha : format a.
Hypothesis Habs : Rabs a <= bpow radix2 mu.

Let t := fl (sigma + a).
Let q := fl (t - sigma).
Let r := fl (a - q).

Lemma sigma_pm_format : forall s : Z, (s = 1 \/ s = -1)%Z ->
  format (sigma + IZR s * bpow radix2 mu).
Proof.
  intros s Hs. unfold sigma, rho.
  replace (bpow radix2 (mu + 53 - b)) with (IZR (2 ^ (53 - b)) * bpow radix2 mu).
  2: { rewrite IZR_pow2 by lia. rewrite <- bpow_plus. f_equal. lia. }
  replace (IZR (2 ^ (53 - b)) * bpow radix2 mu + IZR s * bpow radix2 mu)
    with (IZR (2 ^ (53 - b) + s) * bpow radix2 mu) by (rewrite plus_IZR; ring).
  apply format_mult_bpow; [|lia].
  assert (2 ^ 27 <= 2 ^ (53 - b) <= 2 ^ 52)%Z by (split; apply Z.pow_le_mono_r; lia).
  change (2 ^ 53)%Z with (2 * 2 ^ 52)%Z. lia.
Qed.

Lemma mu_le : bpow radix2 mu <= sigma / 2.
Proof.
  unfold sigma, rho. unfold Rdiv. replace (/ 2) with (bpow radix2 (-1)) by reflexivity.
  rewrite <- bpow_plus. apply bpow_le. lia.
Qed.

Lemma t_range : sigma - bpow radix2 mu <= t <= sigma + bpow radix2 mu.
Proof.
  apply Rabs_le_inv in Habs. unfold t. split.
  - rewrite <- (fl_exact (sigma - bpow radix2 mu)).
    + apply fl_le. lra.
    + replace (sigma - bpow radix2 mu) with (sigma + IZR (-1) * bpow radix2 mu) by (simpl; ring).
      apply sigma_pm_format; lia.
  - rewrite <- (fl_exact (sigma + bpow radix2 mu)).
    + apply fl_le. lra.
    + replace (sigma + bpow radix2 mu) with (sigma + IZR 1 * bpow radix2 mu) by (simpl; ring).
      apply sigma_pm_format; lia.
Qed.

Lemma sigma_format : format sigma.
Proof. apply generic_format_bpow. unfold FLT_exp, prec, emin, rho. lia. Qed.

(** (a) [q = t - sigma] exactly (Sterbenz), [|q| <= 2^mu], and [q] is an
    integer multiple of the unit [2^(mu-b)]. *)
Theorem extract_high_exact : q = t - sigma /\ Rabs q <= bpow radix2 mu.
Proof.
  pose proof t_range. pose proof mu_le. pose proof (bpow_gt_0 radix2 mu).
  assert (Hq : q = t - sigma).
  { unfold q. apply fl_exact. apply sterbenz; auto with typeclass_instances.
    - apply fl_format.
    - apply sigma_format.
    - lra. }
  split; [exact Hq|]. rewrite Hq. apply Rabs_le. lra.
Qed.

Theorem extract_high_unit : exists N : Z, q = IZR N * bpow radix2 (mu - b).
Proof.
  destruct extract_high_exact as [Hq _]. pose proof t_range. pose proof mu_le.
  pose proof (bpow_gt_0 radix2 mu).
  assert (Ht : generic_format radix2 fexp t) by apply fl_format.
  assert (Hmag : (rho <= mag radix2 t)%Z).
  { apply mag_ge_bpow. rewrite Rabs_pos_eq by lra.
    replace (bpow radix2 (rho - 1)) with (sigma / 2); [lra|].
    unfold sigma. unfold Rdiv. replace (/ 2) with (bpow radix2 (-1)) by reflexivity.
    rewrite <- bpow_plus. f_equal; lia. }
  assert (Hce : (mu - b <= cexp radix2 fexp t)%Z).
  { unfold cexp, FLT_exp, prec, emin. unfold rho in Hmag. lia. }
  rewrite Ht in Hq. unfold F2R in Hq. cbn [Fnum Fexp] in Hq.
  exists (Ztrunc (scaled_mantissa radix2 fexp t) * 2 ^ (cexp radix2 fexp t - (mu - b)) - 2 ^ (53))%Z.
  rewrite Hq. unfold sigma, rho. rewrite minus_IZR, mult_IZR.
  rewrite !IZR_pow2 by lia. rewrite Rmult_minus_distr_r, Rmult_assoc, <- !bpow_plus.
  replace (cexp radix2 fexp t - (mu - b) + (mu - b))%Z with (cexp radix2 fexp t) by ring.
  replace (53 + (mu - b))%Z with (mu + 53 - b)%Z by ring. reflexivity.
Qed.

(** (b) [r = a - q] exactly (it is the rounding error of [sigma + a]) and
    [|r| <= 2^(mu-b)]. *)
Theorem extract_low_exact : r = a - q /\ Rabs (a - q) <= bpow radix2 (mu - b).
Proof.
  destruct extract_high_exact as [Hq _]. pose proof t_range. pose proof mu_le.
  pose proof (bpow_gt_0 radix2 mu). apply Rabs_le_inv in Habs as Habs'.
  assert (Herr : a - q = - (t - (sigma + a))) by (rewrite Hq; ring).
  split.
  - unfold r. apply fl_exact. rewrite Herr. apply generic_format_opp.
    apply plus_error; auto with typeclass_instances. apply sigma_format.
  - rewrite Herr, Rabs_Ropp. unfold t, fl.
    eapply Rle_trans; [apply error_le_half_ulp; auto with typeclass_instances|].
    assert (Hpos : 0 < sigma + a) by lra.
    rewrite ulp_neq_0 by lra.
    assert (Hm : (mag radix2 (sigma + a) <= rho + 1)%Z).
    { apply mag_le_bpow; [lra|]. rewrite Rabs_pos_eq by lra. rewrite bpow_plus.
      change (bpow radix2 1) with 2. unfold sigma in *. lra. }
    apply Rle_trans with (/ 2 * bpow radix2 (rho + 1 - 53)).
    + apply Rmult_le_compat_l; [lra|]. apply bpow_le. unfold cexp, FLT_exp, prec, emin, rho in *. lia.
    + replace (/ 2) with (bpow radix2 (-1)) by reflexivity. rewrite <- bpow_plus.
      apply bpow_le. unfold rho. lia.
Qed.
End Extract.

(** ** Lemma T3: if every product [p_l q_l] is an integer multiple of a power
    of two [U = 2^eu >= 2^-1074] and [sum |p_l q_l| <= 2^53 U] (which
    [k 2^(2b) <= 2^53] guarantees for parts of [b] bits), then EVERY
    classical evaluation (any tree, any order, with or without FMA) is exact. *)
Theorem parts_product_exact :
  forall (eu : Z) (t : dtree), (-1074 <= eu)%Z ->
  Forall (fun p => exists N : Z, fst p * snd p = IZR N * bpow radix2 eu) (dpairs t) ->
  absdot (dpairs t) <= IZR (2 ^ 53) * bpow radix2 eu ->
  dfl t = dval t /\ exists N : Z, dval t = IZR N * bpow radix2 eu.
Proof.
  intros eu t Heu. pose proof (bpow_gt_0 radix2 eu) as HU.
  assert (Hfmt : forall N, Rabs (IZR N * bpow radix2 eu) <= IZR (2 ^ 53) * bpow radix2 eu ->
                 format (IZR N * bpow radix2 eu)).
  { intros N HN. apply format_mult_bpow; [|exact Heu].
    rewrite Rabs_mult, (Rabs_pos_eq (bpow _ _)) in HN by lra.
    apply Rmult_le_reg_r in HN; [|exact HU]. rewrite <- abs_IZR in HN. apply le_IZR in HN. exact HN. }
  induction t as [x y | l IHl r IHr | x y r IHr]; intros Hall Hsum;
    rewrite <- dabs_pairs in Hsum; simpl in Hall, Hsum |- *.
  - inversion Hall as [|? ? [N HN] _]; subst. simpl in HN.
    split; [|exists N; exact HN]. apply fl_exact. rewrite HN. apply Hfmt. rewrite <- HN, Rabs_mult. lra.
  - apply Forall_app in Hall as [Hl Hr].
    pose proof (dabs_nonneg l). pose proof (dabs_nonneg r).
    destruct (IHl Hl ltac:(rewrite <- dabs_pairs; lra)) as [El [Nl HNl]].
    destruct (IHr Hr ltac:(rewrite <- dabs_pairs; lra)) as [Er [Nr HNr]].
    assert (Hv : dval l + dval r = IZR (Nl + Nr) * bpow radix2 eu) by (rewrite plus_IZR, HNl, HNr; ring).
    split; [|exists (Nl + Nr)%Z; exact Hv].
    rewrite El, Er. apply fl_exact. rewrite Hv. apply Hfmt. rewrite <- Hv.
    pose proof (dval_le_dabs (DAdd l r)) as Hd. simpl in Hd. lra.
  - inversion Hall as [|? ? [N HN] Hr]; subst. simpl in HN.
    pose proof (Rabs_pos x). pose proof (Rabs_pos y). pose proof (dabs_nonneg r).
    assert (0 <= Rabs x * Rabs y) by nra.
    destruct (IHr Hr ltac:(rewrite <- dabs_pairs; lra)) as [Er [Nr HNr]].
    assert (Hv : x * y + dval r = IZR (N + Nr) * bpow radix2 eu) by (rewrite plus_IZR, HN, HNr; ring).
    split; [|exists (N + Nr)%Z; exact Hv].
    rewrite Er. apply fl_exact. rewrite Hv. apply Hfmt. rewrite <- Hv.
    pose proof (dval_le_dabs (DFma x y r)) as Hd. simpl in Hd. lra.
Qed.

(** ** Lemma T4: TwoProduct, exactly as [tight._two_product] evaluates it
    (Veltkamp's split with factor [2^27 + 1]: [c = fl(x (2^27+1))],
    [x1 = fl(c - fl(c - x))], [x2 = fl(x - x1)]; then
    [e = fl(a2 b2 - fl(fl(fl(p - fl(a1 b1)) - fl(a2 b1)) - fl(a1 b2)))]). *)
Definition split_hi (x : R) : R :=
  let c := fl (x * (bpow radix2 27 + 1)) in fl (c - fl (c - x)).
Definition split_lo (x : R) : R := fl (x - split_hi x).

Definition two_product_err (a b : R) : R :=
  let p := fl (a * b) in
  let a1 := split_hi a in let a2 := split_lo a in
  let b1 := split_hi b in let b2 := split_lo b in
  fl (fl (a2 * b2) - fl (fl (fl (p - fl (a1 * b1)) - fl (a2 * b1)) - fl (a1 * b2))).

(** [a b = fl(a b) + e] when no intermediate underflows: guaranteed by
    [a b = 0] or [|a b| >= 2^-969]; the code checks [|a|, |b| >= 2^-450]
    (so [|a b| >= 2^-900]) or a zero factor.  (Overflow is excluded by the
    [2^256] input cap of [enclosure-tight.md] §1, prose.) *)
Theorem two_product_exact :
  forall a b, format a -> format b ->
  (a * b = 0 \/ bpow radix2 (-969) <= Rabs (a * b)) ->
  a * b = fl (a * b) + two_product_err a b.
Proof.
  intros a b Ha Hb Hab.
  destruct (Pff.Pff2Flocq.Dekker radix2 emin prec (fun t => negb (Z.even t))
              ltac:(unfold prec; lia) ltac:(unfold emin; lia) b a Hb Ha (or_introl eq_refl)) as [HD _].
  rewrite Rmult_comm in Hab. specialize (HD Hab).
  rewrite (Rmult_comm a b). rewrite HD at 1. f_equal.
  change (round radix2 (FLT_exp emin prec) (Znearest (fun t => negb (Z.even t)))) with fl.
  unfold two_product_err, split_lo, split_hi.
  change (prec - Z.div2 prec)%Z with 27%Z.
  (* the split: fl(c - fl(c - x)) = fl(fl(x - c) + c) *)
  assert (Hs : forall x, fl (fl (x * (bpow radix2 27 + 1)) - fl (fl (x * (bpow radix2 27 + 1)) - x))
                   = fl (fl (x - fl (x * (bpow radix2 27 + 1))) + fl (x * (bpow radix2 27 + 1)))).
  { intros x. set (c := fl (x * (bpow radix2 27 + 1))).
    replace (c - x) with (- (x - c)) by ring. rewrite fl_opp. f_equal. ring. }
  rewrite !Hs.
  set (ha := fl (fl (a - fl (a * (bpow radix2 27 + 1))) + fl (a * (bpow radix2 27 + 1)))).
  set (hb := fl (fl (b - fl (b * (bpow radix2 27 + 1))) + fl (b * (bpow radix2 27 + 1)))).
  set (ta := fl (a - ha)). set (tb := fl (b - hb)).
  rewrite (Rmult_comm a b), (Rmult_comm ha hb), (Rmult_comm ta hb), (Rmult_comm ha tb), (Rmult_comm ta tb).
  set (p := fl (b * a)). set (x11 := fl (hb * ha)). set (x12 := fl (hb * ta)).
  set (x21 := fl (tb * ha)). set (x22 := fl (tb * tb)).
  replace (p - x11) with (- (- p + x11)) by ring. rewrite fl_opp.
  replace (- fl (- p + x11) - x12) with (- (fl (- p + x11) + x12)) by ring. rewrite fl_opp.
  replace (- fl (fl (- p + x11) + x12) - x21) with (- (fl (fl (- p + x11) + x12) + x21)) by ring. rewrite fl_opp.
  f_equal. ring.
Qed.
