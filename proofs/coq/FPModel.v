(** * Binary64 round-to-nearest: the standard model with the underflow term

    Backs [proofs/enclosure.md] §2 ("Model", stated once, used everywhere) and
    [proofs/enclosure-tight.md] §1, i.e. the error model that every function of
    [certbound/enclose/fperror.py] (and [tight.py]) relies on.

    A binary64 operation whose result does not overflow returns the exact
    result rounded to nearest, ties to even, in the format with 53-bit
    significands and gradual underflow down to [2^-1074] (IEEE 754-2008 §4.3.1,
    §7.4; Flocq's [FLT_exp (-1074) 53] with [ZnearestE]).  Flocq's real
    rounding [round] has no overflow: overflow (a result of magnitude
    [>= 2^1024]) is excluded in the prose and detected by the code (any
    non-finite intermediate makes the bound +inf). *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core Relative Plus_error Sterbenz.
Open Scope R_scope.

Definition prec : Z := 53%Z.
Definition emin : Z := (-1074)%Z.
Notation fexp := (FLT_exp emin prec).
Notation format := (generic_format radix2 fexp).

(** [fl]: one rounded binary64 operation applied to the exact real result. *)
Definition fl (x : R) : R := round radix2 fexp ZnearestE x.

(** Unit roundoff [u = 2^-53] ([fperror.UNIT_ROUNDOFF]) and the underflow
    quantum [eta = 2^-1074] ([fperror.ETA]). *)
Definition u : R := bpow radix2 (-53).
Definition eta : R := bpow radix2 (-1074).

Lemma prec_gt_0 : Prec_gt_0 prec.
Proof. unfold Prec_gt_0, prec; lia. Qed.
#[export] Existing Instance prec_gt_0.

Lemma u_pos : 0 < u.
Proof. apply bpow_gt_0. Qed.

Lemma eta_pos : 0 < eta.
Proof. apply bpow_gt_0. Qed.

Lemma u_small : u <= / 2 ^ 53.
Proof. unfold u. simpl bpow. right. f_equal. simpl. lra. Qed.

Lemma u_eq : u = / 2 * bpow radix2 (- prec + 1).
Proof. unfold u, prec. simpl bpow. simpl. lra. Qed.

Lemma u_lt_1 : u < 1.
Proof.
  pose proof u_small. assert (/ 2 ^ 53 < 1) by (simpl; lra). lra.
Qed.

Lemma fl_format : forall x, format (fl x).
Proof. intros x; apply generic_format_round; auto with typeclass_instances. Qed.

Lemma fl_exact : forall x, format x -> fl x = x.
Proof. intros x Hx; apply round_generic; auto with typeclass_instances. Qed.

Lemma fl_le : forall x y, x <= y -> fl x <= fl y.
Proof. intros; apply round_le; auto with typeclass_instances. Qed.

Lemma format_0 : format 0.
Proof. apply generic_format_0. Qed.

Lemma format_1 : format 1.
Proof.
  change 1 with (bpow radix2 0). apply generic_format_bpow.
  unfold FLT_exp, prec, emin. simpl. lia.
Qed.

Lemma fl_0 : fl 0 = 0.
Proof. apply round_0; auto with typeclass_instances. Qed.

Lemma fl_nonneg : forall x, 0 <= x -> 0 <= fl x.
Proof. intros x Hx. rewrite <- fl_0. apply fl_le; exact Hx. Qed.

Lemma fl_opp : forall x, fl (- x) = - fl x.
Proof.
  intros x; unfold fl. apply round_NE_opp.
Qed.

(** ** The standard model ([enclosure.md] §2):
    [fl(z) = z(1+d) + e], [|d| <= u], [|e| <= eta/2], [d*e = 0],
    for the exact result [z] of any operation (product, FMA, sum). *)
Theorem standard_model :
  forall z : R, exists d e : R,
    Rabs d <= u /\ Rabs e <= eta / 2 /\ d * e = 0 /\ fl z = z * (1 + d) + e.
Proof.
  intros z.
  destruct (error_N_FLT radix2 emin prec ltac:(unfold prec; lia)
              (fun t => negb (Z.even t)) z) as (d & e & Hd & He & Hde & Hz).
  exists d, e; split; [|split; [|split]]; auto.
  - rewrite u_eq. exact Hd.
  - unfold eta, emin in *. lra.
Qed.

(** Absolute form: [|fl z - z| <= u|z| + eta/2]. *)
Theorem fl_error_abs : forall z, Rabs (fl z - z) <= u * Rabs z + eta / 2.
Proof.
  intros z. destruct (standard_model z) as (d & e & Hd & He & _ & Hz).
  rewrite Hz. replace (z * (1 + d) + e - z) with (z * d + e) by ring.
  eapply Rle_trans; [apply Rabs_triang|].
  rewrite Rabs_mult. pose proof (Rabs_pos z). nra.
Qed.

(** ** Additions and subtractions of floats have no underflow term:
    the sum is exact when it is subnormal (gradual underflow), otherwise the
    relative bound holds ([enclosure.md] §2, "[epsilon = 0] for [+-]"). *)
Theorem fl_add_error :
  forall a b, format a -> format b -> Rabs (fl (a + b) - (a + b)) <= u * Rabs (a + b).
Proof.
  intros a b Ha Hb.
  destruct (Rle_lt_dec (Rabs (a + b)) (bpow radix2 (prec + emin))) as [Hs|Hl].
  - rewrite (fl_exact (a + b)).
    + rewrite Rminus_eq_0, Rabs_R0. apply Rmult_le_pos; [left; apply u_pos|apply Rabs_pos].
    + exact (FLT_format_plus_small radix2 emin prec a b Ha Hb Hs).
  - pose proof (relative_error_N_FLT radix2 emin prec ltac:(unfold prec; lia)
                  (fun t => negb (Z.even t)) (a + b)) as H.
    unfold fl. eapply Rle_trans; [apply H|].
    + left; eapply Rle_lt_trans; [|exact Hl]. apply bpow_le. lia.
    + rewrite u_eq. lra.
Qed.

Theorem fl_sub_error :
  forall a b, format a -> format b -> Rabs (fl (a - b) - (a - b)) <= u * Rabs (a - b).
Proof.
  intros a b Ha Hb. apply fl_add_error; auto. apply generic_format_opp; auto.
Qed.

(** The same bound relative to the computed value, as used in Lemma 3.2
    ([fperror.residual_norm_bound]: the factor [(1+2u)] on [N(R_hat)]) and in
    Lemma T5: [|(a-b) - fl(a-b)| <= 2u |fl(a-b)|]. *)
Theorem fl_sub_error_computed :
  forall a b, format a -> format b -> Rabs ((a - b) - fl (a - b)) <= 2 * u * Rabs (fl (a - b)).
Proof.
  intros a b Ha Hb. pose proof (fl_sub_error a b Ha Hb) as H.
  pose proof u_small as Hu. pose proof u_pos.
  assert (Hu2 : u <= /4) by (simpl in Hu; lra).
  set (z := a - b) in *. set (r := fl z) in *.
  assert (Rabs z <= Rabs r + Rabs (r - z)).
  { replace z with (r + (z - r)) at 1 by ring. eapply Rle_trans; [apply Rabs_triang|].
    rewrite Rabs_minus_sym. lra. }
  rewrite Rabs_minus_sym.
  assert (He : Rabs (r - z) <= u * Rabs r + u * Rabs (r - z)) by nra.
  assert (Rabs (r - z) * (1 - u) <= u * Rabs r) by lra.
  assert (Rabs (r - z) <= 2 * (1 - u) * Rabs (r - z)) by (pose proof (Rabs_pos (r - z)); nra).
  nra.
Qed.

(** The sharper form relative to the computed value, for a sum or
    difference of two floats: [|(a+b) - fl(a+b)| <= u |fl(a+b)|] (Higham
    2002, (2.5); exact when the sum is subnormal).  Used by
    [enclosure-tight.md] Lemma T5 ([tight]: every accumulation step
    [S_k = fl(S_(k-1) +- P_k)] has [|eps_k| <= u |S_k|]) and by Lemma 8.1's
    evaluation in [enclosure.md] §8. *)
Theorem fl_add_error_computed :
  forall a b, format a -> format b -> Rabs ((a + b) - fl (a + b)) <= u * Rabs (fl (a + b)).
Proof.
  intros a b Ha Hb.
  destruct (Rle_lt_dec (Rabs (a + b)) (bpow radix2 (prec + emin))) as [Hs|Hl].
  - rewrite (fl_exact (a + b)).
    + rewrite Rminus_eq_0, Rabs_R0. apply Rmult_le_pos; [left; apply u_pos|apply Rabs_pos].
    + exact (FLT_format_plus_small radix2 emin prec a b Ha Hb Hs).
  - rewrite Rabs_minus_sym. unfold fl.
    eapply Rle_trans; [apply (relative_error_N_FLT_round radix2 emin prec ltac:(unfold prec; lia))|].
    + left; eapply Rle_lt_trans; [|exact Hl]. apply bpow_le. lia.
    + rewrite u_eq. lra.
Qed.

Theorem fl_sub_error_computed_u :
  forall a b, format a -> format b -> Rabs ((a - b) - fl (a - b)) <= u * Rabs (fl (a - b)).
Proof.
  intros a b Ha Hb. apply fl_add_error_computed; auto. apply generic_format_opp; auto.
Qed.

(** ** Sterbenz's lemma where the code uses it ([enclosure.md] Lemma 3.1;
    [fperror.gram_deviation_bound]: [D[i,i] -= 1.0] is exact when the
    diagonal entry [g] of the computed Gram matrix lies in [[1/2, 2]]). *)
Theorem gram_diagonal_shift_exact :
  forall g, format g -> / 2 <= g <= 2 -> fl (g - 1) = g - 1.
Proof.
  intros g Hg Hr. apply fl_exact. apply sterbenz; auto with typeclass_instances.
  - exact format_1.
  - lra.
Qed.

(** F5 ([enclosure.md] §9, [external-facts.md] §FP4, Higham Thm 2.5): for
    binary64 floats [x], [y] with [y/2 <= x <= 2y], [x - y] is a float, so
    the computed difference is exact (Flocq's [sterbenz], gradual underflow
    included).  [gram_diagonal_shift_exact] above is the case [y = 1]. *)
Theorem f5_sterbenz :
  forall x y, format x -> format y -> y / 2 <= x <= 2 * y -> format (x - y) /\ fl (x - y) = x - y.
Proof.
  intros x y Hx Hy Hr.
  assert (Hf : format (x - y)) by (apply sterbenz; auto with typeclass_instances).
  split; [exact Hf | apply fl_exact, Hf].
Qed.
