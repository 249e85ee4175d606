(** * Lemma S: Sturm counts of a float symmetric tridiagonal matrix

    Backs [proofs/enclosure-gram.md] §1, Lemma S and its Corollary (the
    tridiagonal certificate); code: [certbound/enclose/tridiagonal.py]
    ([sturm_counts], [sturm_perturbation], the outward ends of
    [tridiagonal_eigenvalue_bounds]).

    The code's recurrence ([sturm_counts]; IEEE binary64, round to nearest
    even, gradual underflow; one rounding per numpy operation,
    [FPModel.fl]) for the diagonal [d 0 .. d (n-1)], the off-diagonal
    [e 0 .. e (n-2)] ([e k] couples [d k] and [d (k+1)]; 0-based here,
    1-based in the prose) and a float shift [mu]:
    - [s = e * e] once: [s k = fl(e k * e k)];
    - [Q[0] = d[0] - mu]: [q 0 = fl(d 0 - mu)];
    - [R[i-1] = s[i-1] / Q[i-1]], [Q[i] = d[i] - mu], [Q[i] = Q[i] - R[i-1]]:
      [q (k+1) = fl(fl(d (k+1) - mu) - fl(s k / q k))];
    - the count is [#{i : Q[i] < 0}].
    The guards ([_sturm_guarded]; a shift that violates one is
    [valid = False]): (G1) [e k = 0] or [fl(e k * e k) > 2^-1022] STRICTLY
    (and [s] finite); (G2) [s k = 0] or [|fl(s k / q k)| > 2^-1022]
    STRICTLY; (G3) every [q i] finite and nonzero.

    Proved here:
    - (a) [lemma_s_step_model], [lemma_s_recurrence_model]: under the
      guards [s = e^2(1+eps2)] and
      [q' = ((d-mu)(1+eps1) - s(1+eps3)/q)(1+eps4)], all [|eps| <= u = 2^-53]
      ([d - mu] of floats is exact when subnormal, so [eps1] needs no
      guard; [eps2], [eps3] need the strict guards: a ROUNDED value
      [> 2^-1022] has an exact value [> 2^-1022], [guard_exact]);
    - (b) [lemma_s_rescaled_recurrence], [qbar_sign]:
      [qbar i = q i / ((1+eps4 i)(1+eps1 i))] satisfy the exact recurrence
      [qbar 0 = d 0 - mu], [qbar (k+1) = (d (k+1) - mu) - ebar2 k / qbar k]
      with [ebar2 k = e k^2 (1+eps2)(1+eps3)/((1+eps4 k)(1+eps1 k)(1+eps1 (k+1)))]
      ([eps4 0 = 0]), and [qbar i < 0 <-> q i < 0], [qbar i <> 0];
    - (c) [lemma_s_perturbation]: [ebar k] (the sign of [e k],
      [ebar k ^ 2 = ebar2 k]) has [|ebar k - e k| <= rho |e k|],
      [rho = sqrt((1+u)^2/(1-u)^3) - 1]; [sturm_perturbation_bound]:
      [||T_ebar - T||_2 <= 2 max|e| rho], the code's [delta]
      ([NormBounds.trim_diff_opbound]: a symmetric tridiagonal difference);
    - [lemma_s_count_enclosure]: the count [c] gives [lam_j < mu + delta]
      for [j < c] and [lam_j >= mu - delta] for [j >= c], with the linear
      algebra as named section hypotheses (as [TheoremR.v] does with
      Weyl): the exact recurrence gives the LDL^T pivots of
      [Tbar - mu I], so by Sylvester's law of inertia the number of
      negative ones is the number of eigenvalues of [Tbar] below [mu]
      ([sylvester]); Weyl moves every eigenvalue by at most
      [||Tbar - T||_2] ([weyl]);
    - [sturm_counts_ieee_model], [sturm_counts_enclosure]: the same for the
      IEEE computation (Flocq's [BinarySingleNaN]: infinities, NaN): when
      every [q i] is finite and nonzero, every intermediate was finite (no
      overflow anywhere) and equals the [fl] value of the model;
    - [normalised_guards], [sturm_normalised_enclosure]: the normalised
      path ([_sturm_normalised], in pivot blocks of 64 rows, and
      [_sturm_normalised_scalar] for few shifts: the same floats in the same
      order; a shift stopped at its first failing [q] is invalid:
      [|d| < 2], [|e| < 2], [e = 0] or
      [|e| >= 2^-300], [|mu| <= 8], and the single test
      [min |q i| >= 2^-400]) implies every guard, with finiteness PROVED
      (an infinite [q] would pass the test);
    - [tridiagonal_eigenvalue_bounds_outward]: the code's
      [nextafter(mu_L - rho, -inf)], [nextafter(mu_U + rho, +inf)].
    - [roundtrip_exact], [scaled_back_lower], [scaled_back_upper]: the
      [ldexp] round-trip exactness test of the scaling of [T] and of the
      ends scaled back (else one step outward).
    - [tridiagonal_bounds_extra]: the widening by [extra >= ||2^t T - T'||_2]
      (an inexactly scaled [T], zeroed tiny off-diagonals;
      [NormBounds.trim_diff_opbound] bounds that norm; Weyl a hypothesis).
    - [gershgorin_a_upper], [gershgorin_row_ends]: [gershgorin_bounds]'
      float ends (with [NormBounds.gershgorin_tridiagonal]).
    Still prose: [_best_shifts]' choice of shifts (any valid shift gives
    valid ends). *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core Relative.
From Certbound Require Import FPModel OneStep IEEEFinite Scaling NormBounds.
Open Scope R_scope.

(** The smallest positive normal binary64, [2^-1022]. *)
Definition min_normal : R := bpow radix2 (-1022).

Lemma min_normal_pos : 0 < min_normal.
Proof. apply bpow_gt_0. Qed.

Lemma min_normal_format : format min_normal.
Proof.
  unfold min_normal. apply generic_format_bpow. unfold FLT_exp, emin, prec. simpl. lia.
Qed.

(** A STRICT guard on the rounded value gives a strict bound on the exact
    one (monotonicity of rounding; [2^-1022] is a float).  The non-strict
    version fails at a tie ([TheoremRFloat.ldexp_tie_counterexample]). *)
Lemma guard_exact : forall x, min_normal < Rabs (fl x) -> min_normal < Rabs x.
Proof.
  intros x H. destruct (Rlt_or_le min_normal (Rabs x)) as [Hx|Hx]; [exact Hx|].
  exfalso. assert (Rabs (fl x) <= min_normal).
  { unfold fl. apply abs_round_le_generic; auto with typeclass_instances.
    exact min_normal_format. }
  lra.
Qed.

(** Relative error [u] of a result at least [2^-1022] in magnitude. *)
Lemma fl_rel_normal : forall x, min_normal <= Rabs x -> Rabs (fl x - x) <= u * Rabs x.
Proof.
  intros x Hx. unfold fl.
  eapply Rle_trans.
  - apply (relative_error_N_FLT radix2 emin prec ltac:(unfold prec; lia)).
    unfold emin, prec, min_normal in *. simpl Z.add. exact Hx.
  - rewrite u_eq. lra.
Qed.

(** The relative error of one rounding, as an explicit number
    ([0] for an exact zero). *)
Definition releps (x : R) : R := if Req_EM_T x 0 then 0 else (fl x - x) / x.

Lemma releps_spec :
  forall x, Rabs (fl x - x) <= u * Rabs x ->
  Rabs (releps x) <= u /\ fl x = x * (1 + releps x).
Proof.
  intros x H. unfold releps. destruct (Req_EM_T x 0) as [H0|H0].
  - subst x. rewrite fl_0. rewrite Rabs_R0. split; [left; apply u_pos|ring].
  - assert (Hx : 0 < Rabs x) by (apply Rabs_pos_lt; exact H0). split.
    + unfold Rdiv. rewrite Rabs_mult, Rabs_inv.
      apply (Rmult_le_reg_r (Rabs x)); [exact Hx|].
      rewrite Rmult_assoc, Rinv_l by lra. lra.
    + field. exact H0.
Qed.

Lemma u_le_quarter : u <= / 4.
Proof. pose proof u_small. simpl in H. lra. Qed.

Lemma one_plus_pos : forall x, Rabs x <= u -> 0 < 1 + x.
Proof.
  intros x H. pose proof u_le_quarter. apply Rabs_le_inv in H. lra.
Qed.

(** Under the guard [e = 0 \/ fl(e e) > 2^-1022], [s = fl(e e)] has
    relative error at most [u]. *)
Lemma square_rel :
  forall ee, ee = 0 \/ min_normal < fl (ee * ee) ->
  Rabs (fl (ee * ee) - ee * ee) <= u * Rabs (ee * ee).
Proof.
  intros ee [H|H].
  - subst ee. rewrite Rmult_0_l, fl_0, Rminus_0_r, Rabs_R0. lra.
  - apply fl_rel_normal. left. apply guard_exact.
    rewrite Rabs_pos_eq; [exact H|]. pose proof min_normal_pos. lra.
Qed.

(** Under the guard [s = 0 \/ |fl(s/q)| > 2^-1022], the quotient has
    relative error at most [u]. *)
Lemma quotient_rel :
  forall s qq, s = 0 \/ min_normal < Rabs (fl (s / qq)) ->
  Rabs (fl (s / qq) - s / qq) <= u * Rabs (s / qq).
Proof.
  intros s qq [H|H].
  - subst s. unfold Rdiv. rewrite Rmult_0_l, fl_0, Rminus_0_r, Rabs_R0. lra.
  - apply fl_rel_normal. left. apply guard_exact. exact H.
Qed.

(** ** (a) One step of the recurrence in the relative model. *)
Theorem lemma_s_step_model :
  forall dd mu ee qq,
  format dd -> format mu ->
  ee = 0 \/ min_normal < fl (ee * ee) ->
  fl (ee * ee) = 0 \/ min_normal < Rabs (fl (fl (ee * ee) / qq)) ->
  exists eps1 eps2 eps3 eps4,
    Rabs eps1 <= u /\ Rabs eps2 <= u /\ Rabs eps3 <= u /\ Rabs eps4 <= u /\
    fl (ee * ee) = ee * ee * (1 + eps2) /\
    fl (dd - mu) = (dd - mu) * (1 + eps1) /\
    fl (fl (dd - mu) - fl (fl (ee * ee) / qq)) =
      ((dd - mu) * (1 + eps1) - fl (ee * ee) * (1 + eps3) / qq) * (1 + eps4).
Proof.
  intros dd mu ee qq Hd Hmu He Ht.
  destruct (releps_spec _ (fl_sub_error dd mu Hd Hmu)) as [H1 E1].
  destruct (releps_spec _ (square_rel ee He)) as [H2 E2].
  destruct (releps_spec _ (quotient_rel _ qq Ht)) as [H3 E3].
  destruct (releps_spec _ (fl_sub_error (fl (dd - mu)) (fl (fl (ee * ee) / qq))
                             (fl_format _) (fl_format _))) as [H4 E4].
  exists (releps (dd - mu)), (releps (ee * ee)), (releps (fl (ee * ee) / qq)),
    (releps (fl (dd - mu) - fl (fl (ee * ee) / qq))).
  repeat split; auto.
  rewrite E4 at 1. rewrite E3 at 1. rewrite E1 at 1. unfold Rdiv. ring.
Qed.

(** ** The factor [rho] of (c). *)
Definition ratio_lo : R := (1 - u) ^ 2 / (1 + u) ^ 3.
Definition ratio_hi : R := (1 + u) ^ 2 / (1 - u) ^ 3.
Definition rho : R := sqrt ratio_hi - 1.

Lemma ratio_lo_pos : 0 < (1 - u) ^ 2 / (1 + u) ^ 3.
Proof.
  pose proof u_pos. pose proof u_le_quarter.
  apply Rdiv_lt_0_compat; apply pow_lt; lra.
Qed.

(** Five relative errors (one of them possibly [0]) combine within
    [[ratio_lo, ratio_hi]]. *)
Lemma ratio_bounds : forall a b c x y,
  Rabs a <= u -> Rabs b <= u -> Rabs c <= u -> Rabs x <= u -> Rabs y <= u ->
  (1 - u) ^ 2 / (1 + u) ^ 3 <= (1 + b) * (1 + c) / ((1 + x) * (1 + a) * (1 + y))
    <= (1 + u) ^ 2 / (1 - u) ^ 3.
Proof.
  intros a b c x y Ha Hb Hc Hx Hy.
  pose proof u_pos. pose proof u_le_quarter.
  apply Rabs_le_inv in Ha, Hb, Hc, Hx, Hy.
  assert (Hd : 0 < (1 + x) * (1 + a) * (1 + y)) by (repeat apply Rmult_lt_0_compat; lra).
  assert (Hm : 0 < (1 + u) ^ 3) by (apply pow_lt; lra).
  assert (Hm' : 0 < (1 - u) ^ 3) by (apply pow_lt; lra).
  assert (Hn1 : (1 - u) ^ 2 <= (1 + b) * (1 + c)).
  { simpl. rewrite Rmult_1_r. apply Rmult_le_compat; lra. }
  assert (Hn2 : (1 + b) * (1 + c) <= (1 + u) ^ 2).
  { simpl. rewrite Rmult_1_r. apply Rmult_le_compat; lra. }
  assert (Hd1 : (1 - u) ^ 3 <= (1 + x) * (1 + a) * (1 + y)).
  { simpl. rewrite Rmult_1_r, <- Rmult_assoc.
    apply Rmult_le_compat; [nra|lra|apply Rmult_le_compat; lra|lra]. }
  assert (Hd2 : (1 + x) * (1 + a) * (1 + y) <= (1 + u) ^ 3).
  { simpl. rewrite Rmult_1_r, <- Rmult_assoc.
    apply Rmult_le_compat; [nra|lra|apply Rmult_le_compat; lra|lra]. }
  split.
  - apply (Rmult_le_reg_r ((1 + u) ^ 3 * ((1 + x) * (1 + a) * (1 + y)))).
    { apply Rmult_lt_0_compat; assumption. }
    unfold Rdiv. replace ((1 - u) ^ 2 * / (1 + u) ^ 3 * ((1 + u) ^ 3 * ((1 + x) * (1 + a) * (1 + y))))
      with ((1 - u) ^ 2 * ((1 + x) * (1 + a) * (1 + y))) by (field; lra).
    replace ((1 + b) * (1 + c) * / ((1 + x) * (1 + a) * (1 + y)) * ((1 + u) ^ 3 * ((1 + x) * (1 + a) * (1 + y))))
      with ((1 + b) * (1 + c) * (1 + u) ^ 3) by (field; lra).
    apply Rmult_le_compat; nra.
  - apply (Rmult_le_reg_r ((1 - u) ^ 3 * ((1 + x) * (1 + a) * (1 + y)))).
    { apply Rmult_lt_0_compat; assumption. }
    unfold Rdiv. replace ((1 + u) ^ 2 * / (1 - u) ^ 3 * ((1 - u) ^ 3 * ((1 + x) * (1 + a) * (1 + y))))
      with ((1 + u) ^ 2 * ((1 + x) * (1 + a) * (1 + y))) by (field; lra).
    replace ((1 + b) * (1 + c) * / ((1 + x) * (1 + a) * (1 + y)) * ((1 - u) ^ 3 * ((1 + x) * (1 + a) * (1 + y))))
      with ((1 + b) * (1 + c) * (1 - u) ^ 3) by (field; lra).
    apply Rmult_le_compat; nra.
Qed.

(** [|sqrt r - 1| <= rho] on [[ratio_lo, ratio_hi]]: the upper side is
    the definition, the lower one follows from
    [sqrt ratio_lo + sqrt ratio_hi >= 2 sqrt(sqrt(ratio_lo ratio_hi)) >= 2]
    ([ratio_lo * ratio_hi = 1/(1-u^2) >= 1]). *)
Lemma sqrt_dev_le : forall r,
  (1 - u) ^ 2 / (1 + u) ^ 3 <= r -> r <= (1 + u) ^ 2 / (1 - u) ^ 3 ->
  Rabs (sqrt r - 1) <= rho.
Proof.
  intros r Hlo Hhi. pose proof u_pos. pose proof u_le_quarter.
  pose proof ratio_lo_pos as Hl0.
  assert (Hprod : 1 <= ratio_lo * ratio_hi).
  { unfold ratio_lo, ratio_hi.
    replace ((1 - u) ^ 2 / (1 + u) ^ 3 * ((1 + u) ^ 2 / (1 - u) ^ 3)) with (/ ((1 - u) * (1 + u)))
      by (field; lra).
    rewrite <- Rinv_1. apply Rinv_le_contravar; nra. }
  assert (Hab : 1 <= sqrt ratio_lo * sqrt ratio_hi).
  { rewrite <- sqrt_mult_alt by (unfold ratio_lo; lra).
    rewrite <- sqrt_1. apply sqrt_le_1_alt, Hprod. }
  set (a := sqrt ratio_lo) in *. set (b := sqrt ratio_hi) in *.
  assert (Ha : 0 <= a) by apply sqrt_pos. assert (Hb : 0 <= b) by apply sqrt_pos.
  assert (Hsq4 : 4 <= (a + b) * (a + b)).
  { replace ((a + b) * (a + b)) with ((a - b) * (a - b) + 4 * (a * b)) by ring.
    pose proof (Rle_0_sqr (a - b)) as Hs. unfold Rsqr in Hs. lra. }
  assert (Hsum : 2 <= a + b).
  { destruct (Rle_or_lt 2 (a + b)) as [|Hlt]; [assumption|].
    exfalso. assert ((a + b) * (a + b) < 2 * 2) by (apply Rmult_le_0_lt_compat; lra). lra. }
  assert (H1 : a <= sqrt r) by (apply sqrt_le_1_alt; exact Hlo).
  assert (H2 : sqrt r <= b) by (apply sqrt_le_1_alt; exact Hhi).
  unfold rho. fold b. apply Rabs_le. lra.
Qed.

Lemma rho_nonneg : 0 <= rho.
Proof.
  unfold rho.
  assert (Hhi : 1 <= ratio_hi).
  { unfold ratio_hi. pose proof u_pos. pose proof u_le_quarter.
    apply (Rmult_le_reg_r ((1 - u) ^ 3)); [apply pow_lt; lra|].
    unfold Rdiv. rewrite Rmult_assoc, Rinv_l, Rmult_1_r, Rmult_1_l by (apply pow_nonzero; lra).
    simpl. nra. }
  assert (1 <= sqrt ratio_hi) by (rewrite <- sqrt_1; apply sqrt_le_1_alt, Hhi). lra.
Qed.

(** ** The whole recurrence for one shift. *)
Section Sturm.

Variables (d e : nat -> R) (mu : R) (n : nat).
Hypothesis d_format : forall i, format (d i).
Hypothesis mu_format : format mu.

Definition sq (k : nat) : R := fl (e k * e k).
Definition dm (i : nat) : R := fl (d i - mu).

Fixpoint q (i : nat) : R :=
  match i with
  | O => dm O
  | S k => fl (dm (S k) - fl (sq k / q k))
  end.

Definition quot (k : nat) : R := fl (sq k / q k).

(** The run-time guards of the code, for the indices of an [n x n]
    matrix. *)
Hypothesis guard_e : forall k, (S k < n)%nat -> e k = 0 \/ min_normal < sq k.
Hypothesis guard_quot : forall k, (S k < n)%nat -> sq k = 0 \/ min_normal < Rabs (quot k).
Hypothesis guard_q : forall i, (i < n)%nat -> q i <> 0.

(** The explicit rounding errors. *)
Definition eps1 (i : nat) : R := releps (d i - mu).
Definition eps2 (k : nat) : R := releps (e k * e k).
Definition eps3 (k : nat) : R := releps (sq k / q k).
Definition eps4 (i : nat) : R :=
  match i with
  | O => 0
  | S k => releps (dm (S k) - quot k)
  end.

Lemma eps1_spec : forall i, Rabs (eps1 i) <= u /\ dm i = (d i - mu) * (1 + eps1 i).
Proof. intros i. apply releps_spec, fl_sub_error; auto. Qed.

Lemma eps2_spec : forall k, (S k < n)%nat ->
  Rabs (eps2 k) <= u /\ sq k = e k * e k * (1 + eps2 k).
Proof. intros k Hk. apply releps_spec, square_rel, guard_e, Hk. Qed.

Lemma eps3_spec : forall k, (S k < n)%nat ->
  Rabs (eps3 k) <= u /\ quot k = sq k / q k * (1 + eps3 k).
Proof. intros k Hk. apply releps_spec, quotient_rel, guard_quot, Hk. Qed.

Lemma eps4_spec : forall i, (i < n)%nat ->
  Rabs (eps4 i) <= u /\ q i = (dm i - (match i with O => 0 | S k => quot k end)) * (1 + eps4 i).
Proof.
  intros [|k] Hi; simpl.
  - rewrite Rabs_R0, Rminus_0_r, Rplus_0_r, Rmult_1_r. split; [left; apply u_pos|reflexivity].
  - apply releps_spec, fl_sub_error; apply fl_format.
Qed.

Lemma eps4_small : forall i, (i < n)%nat -> Rabs (eps4 i) <= u.
Proof. intros i Hi. apply eps4_spec, Hi. Qed.

(** (a) for the whole recurrence: [q (k+1) = ((d-mu)(1+eps1) - s(1+eps3)/q k)(1+eps4)]
    and [s = e^2(1+eps2)], every [|eps| <= u]. *)
Theorem lemma_s_recurrence_model :
  forall k, (S k < n)%nat ->
  Rabs (eps1 (S k)) <= u /\ Rabs (eps2 k) <= u /\ Rabs (eps3 k) <= u /\
  Rabs (eps4 (S k)) <= u /\
  sq k = e k * e k * (1 + eps2 k) /\
  q (S k) = ((d (S k) - mu) * (1 + eps1 (S k)) - sq k * (1 + eps3 k) / q k)
            * (1 + eps4 (S k)).
Proof.
  intros k Hk.
  destruct (eps1_spec (S k)) as [H1 E1].
  destruct (eps2_spec k Hk) as [H2 E2].
  destruct (eps3_spec k Hk) as [H3 E3].
  destruct (eps4_spec (S k) Hk) as [H4 E4].
  repeat split; auto. rewrite E4, E3, E1. unfold Rdiv. ring.
Qed.

(** ** (b) The rescaled pivots and the perturbed off-diagonal. *)
Definition qbar (i : nat) : R := q i / ((1 + eps4 i) * (1 + eps1 i)).

Definition ebar2 (k : nat) : R :=
  e k * e k * (1 + eps2 k) * (1 + eps3 k)
  / ((1 + eps4 k) * (1 + eps1 k) * (1 + eps1 (S k))).

(** The exact recurrence (the LDL^T pivots of [Tbar - mu I]) with
    squared off-diagonal [f k]. *)
Fixpoint pivots (f : nat -> R) (i : nat) : R :=
  match i with
  | O => d O - mu
  | S k => (d (S k) - mu) - f k / pivots f k
  end.

Lemma factor_pos1 : forall i, 0 < 1 + eps1 i.
Proof. intros i. apply one_plus_pos, eps1_spec. Qed.

Lemma factor_pos4 : forall i, (i < n)%nat -> 0 < 1 + eps4 i.
Proof. intros i Hi. apply one_plus_pos, eps4_small, Hi. Qed.

Lemma qbar_sign : forall i, (i < n)%nat -> (qbar i < 0 <-> q i < 0) /\ qbar i <> 0.
Proof.
  intros i Hi. unfold qbar.
  pose proof (factor_pos1 i). pose proof (factor_pos4 i Hi). pose proof (guard_q i Hi).
  assert (Hp : 0 < (1 + eps4 i) * (1 + eps1 i)) by (apply Rmult_lt_0_compat; lra).
  assert (Hinv : 0 < / ((1 + eps4 i) * (1 + eps1 i))) by (apply Rinv_0_lt_compat; exact Hp).
  unfold Rdiv. split; [split; intros Hq|].
  - destruct (Rlt_or_le (q i) 0) as [|Hq']; [assumption|].
    exfalso. assert (0 <= q i * / ((1 + eps4 i) * (1 + eps1 i))) by (apply Rmult_le_pos; lra). lra.
  - assert (0 < - q i * / ((1 + eps4 i) * (1 + eps1 i))) by (apply Rmult_lt_0_compat; lra). lra.
  - intros Hz. apply Rmult_integral in Hz. destruct Hz as [Hz|Hz]; [contradiction|lra].
Qed.

Theorem lemma_s_rescaled_recurrence :
  qbar O = d O - mu /\
  (forall k, (S k < n)%nat -> qbar (S k) = (d (S k) - mu) - ebar2 k / qbar k).
Proof.
  split.
  - unfold qbar. simpl eps4. simpl q. destruct (eps1_spec O) as [_ E1].
    rewrite E1. pose proof (factor_pos1 O). field. lra.
  - intros k Hk.
    assert (Hk' : (k < n)%nat) by lia.
    destruct (lemma_s_recurrence_model k Hk) as (_ & _ & _ & _ & E2 & Eq).
    pose proof (factor_pos1 k). pose proof (factor_pos1 (S k)).
    pose proof (factor_pos4 k Hk'). pose proof (factor_pos4 (S k) Hk).
    pose proof (guard_q k Hk').
    unfold qbar, ebar2. rewrite Eq, E2. field.
    repeat split; lra.
Qed.

Lemma qbar_pivots : forall i, (i < n)%nat -> qbar i = pivots ebar2 i.
Proof.
  induction i as [|k IH]; intros Hi.
  - apply lemma_s_rescaled_recurrence.
  - simpl. rewrite <- IH by lia. apply lemma_s_rescaled_recurrence, Hi.
Qed.

(** ** (c) The perturbation of the off-diagonal. *)
Definition ebar (k : nat) : R :=
  if Rle_dec 0 (e k) then sqrt (ebar2 k) else - sqrt (ebar2 k).

Lemma ebar2_ratio : forall k, (S k < n)%nat ->
  exists r, ebar2 k = e k * e k * r /\
    (1 - u) ^ 2 / (1 + u) ^ 3 <= r <= (1 + u) ^ 2 / (1 - u) ^ 3.
Proof.
  intros k Hk. assert (Hk' : (k < n)%nat) by lia.
  destruct (lemma_s_recurrence_model k Hk) as (H1' & H2 & H3 & _ & _ & _).
  pose proof (proj1 (eps1_spec k)) as H1. pose proof (eps4_small k Hk') as H4.
  exists ((1 + eps2 k) * (1 + eps3 k) / ((1 + eps4 k) * (1 + eps1 k) * (1 + eps1 (S k)))).
  split; [unfold ebar2, Rdiv; ring|].
  apply ratio_bounds; assumption.
Qed.

Theorem lemma_s_perturbation : forall k, (S k < n)%nat ->
  ebar k * ebar k = ebar2 k /\ Rabs (ebar k - e k) <= rho * Rabs (e k).
Proof.
  intros k Hk. destruct (ebar2_ratio k Hk) as (r & Er & Hlo & Hhi).
  pose proof (ratio_lo_pos) as Hl0.
  assert (Hr : 0 <= r) by lra.
  assert (Hsq : sqrt (ebar2 k) = Rabs (e k) * sqrt r).
  { rewrite Er, sqrt_mult_alt by apply Rle_0_sqr.
    change (e k * e k) with (Rsqr (e k)). rewrite sqrt_Rsqr_abs. reflexivity. }
  assert (H2 : 0 <= ebar2 k) by (rewrite Er; apply Rmult_le_pos; [apply Rle_0_sqr|exact Hr]).
  pose proof (sqrt_dev_le r Hlo Hhi) as Hd.
  pose proof (Rabs_pos (e k)) as Ha.
  unfold ebar. destruct (Rle_dec 0 (e k)) as [Hs|Hs].
  - split; [apply sqrt_sqrt, H2|].
    rewrite Hsq, (Rabs_pos_eq (e k) Hs).
    replace (e k * sqrt r - e k) with (e k * (sqrt r - 1)) by ring.
    rewrite Rabs_mult, (Rabs_pos_eq (e k) Hs). rewrite Rmult_comm.
    apply Rmult_le_compat_r; [exact Hs|exact Hd].
  - split; [replace (- sqrt (ebar2 k) * - sqrt (ebar2 k)) with (sqrt (ebar2 k) * sqrt (ebar2 k)) by ring; apply sqrt_sqrt, H2|].
    rewrite Hsq, (Rabs_left (e k)) by lra.
    replace (- (- e k * sqrt r) - e k) with (e k * (sqrt r - 1)) by ring.
    rewrite Rabs_mult, (Rabs_left (e k)) by lra. rewrite Rmult_comm.
    apply Rmult_le_compat_r; [lra|exact Hd].
Qed.

(** ** The count and the assembly. *)

(** The number of [i < m] with [f i < 0]. *)
Fixpoint negcount (f : nat -> R) (m : nat) : nat :=
  match m with
  | O => O
  | S m' => (negcount f m' + (if Rlt_dec (f m') 0 then 1 else 0))%nat
  end.

Lemma negcount_ext : forall f g m, (forall i, (i < m)%nat -> (f i < 0 <-> g i < 0)) ->
  negcount f m = negcount g m.
Proof.
  intros f g m. induction m as [|m IH]; intros H; simpl; [reflexivity|].
  rewrite IH by (intros; apply H; lia).
  destruct (Rlt_dec (f m) 0) as [Hf|Hf]; destruct (Rlt_dec (g m) 0) as [Hg|Hg]; auto.
  - exfalso. apply Hg, H; auto.
  - exfalso. apply Hf, H; auto.
Qed.

Lemma pivots_ext : forall f g i, (forall k, (k < i)%nat -> f k = g k) ->
  pivots f i = pivots g i.
Proof.
  intros f g. induction i as [|k IH]; intros H; simpl; [reflexivity|].
  rewrite (H k) by lia. rewrite IH by (intros; apply H; lia). reflexivity.
Qed.

(** The count of the code (negative computed pivots) is the count of
    negative exact pivots of [Tbar - mu I], with [Tbar]'s off-diagonal
    [ebar]. *)
Theorem lemma_s_count_rescaled :
  negcount q n = negcount (pivots (fun k => (ebar k * ebar k)%R)) n /\
  (forall i, (i < n)%nat -> pivots (fun k => ebar k * ebar k) i <> 0).
Proof.
  assert (Hp : forall i, (i < n)%nat -> pivots (fun k => ebar k * ebar k) i = qbar i).
  { intros i Hi. rewrite qbar_pivots by exact Hi. apply pivots_ext.
    intros k Hk. apply lemma_s_perturbation. lia. }
  split.
  - apply negcount_ext. intros i Hi. rewrite Hp by exact Hi.
    symmetry. apply qbar_sign, Hi.
  - intros i Hi. rewrite Hp by exact Hi. apply qbar_sign, Hi.
Qed.

(** The linear algebra, as named hypotheses.  [lam f j] is the [j]-th
    smallest eigenvalue ([j < n]) of the symmetric tridiagonal matrix with
    diagonal [d] and off-diagonal [f] ([lam e] for the stored [T]).
    - [sylvester]: when the exact pivots [pivots (f^2)] of [T_f - mu I]
      (its LDL^T factorisation, [D = diag(pivots)]) are all nonzero, the
      number [c] of negative ones is the number of eigenvalues below [mu]
      (Sylvester's law of inertia; Golub & Van Loan, Matrix Computations,
      4th ed., Thm 8.1.17 and §8.4.1);
    - [weyl]: eigenvalues of symmetric matrices move by at most the
      spectral norm of the difference (Weyl; Horn & Johnson, Matrix
      Analysis, 2013, Thm 4.3.1), here for [T_f = trim d f] and
      [T = trim d e] ([NormBounds.trim]; [opbound] is [||.||_2 <= c]).
    The bound [||T_ebar - T||_2 <= 2 max|e| rho] itself is proved
    ([NormBounds.trim_diff_opbound]). *)
Variable lam : (nat -> R) -> nat -> R.

Hypothesis sylvester : forall f,
  (forall i, (i < n)%nat -> pivots (fun k => f k * f k) i <> 0) ->
  forall j, (j < n)%nat ->
  ((j < negcount (pivots (fun k => (f k * f k)%R)) n)%nat -> lam f j < mu) /\
  ((negcount (pivots (fun k => (f k * f k)%R)) n <= j)%nat -> mu <= lam f j).

Hypothesis weyl : forall f c,
  opbound n n (fun i j => trim d f i j - trim d e i j) c ->
  forall j, (j < n)%nat -> Rabs (lam f j - lam e j) <= c.

(** [delta >= 2 emx rho], [emx >= |e k|] (the code's [sturm_perturbation]:
    [succ(fl(K max|e|))], [K >= 2 rho] from Arb: [sturm_perturbation_code]). *)
Variables (emx delta : R).
Hypothesis emx_nonneg : 0 <= emx.
Hypothesis emx_ge : forall k, (S k < n)%nat -> Rabs (e k) <= emx.
Hypothesis delta_ge : 2 * emx * rho <= delta.

(** [||T_ebar - T||_2 <= 2 emx rho <= delta]. *)
Lemma sturm_perturbation_bound :
  opbound n n (fun i j => trim d ebar i j - trim d e i j) delta.
Proof.
  pose proof rho_nonneg as Hr.
  apply opbound_weaken with (0 + 2 * (rho * emx)); [|lra].
  apply trim_diff_opbound; [lra|apply Rmult_le_pos; assumption| |].
  - intros i _. rewrite Rminus_eq_0, Rabs_R0. lra.
  - intros k Hk. eapply Rle_trans; [apply lemma_s_perturbation, Hk|].
    apply Rmult_le_compat_l; [exact Hr|apply emx_ge, Hk].
Qed.

(** The Sturm-count enclosure: for a shift [mu] that passes the guards,
    with [c] the code's count, the [j]-th eigenvalue of the stored [T] is
    [< mu + delta] for [j < c] and [>= mu - delta] for [j >= c]. *)
Theorem lemma_s_count_enclosure : forall j, (j < n)%nat ->
  ((j < negcount q n)%nat -> lam e j < mu + delta) /\
  ((negcount q n <= j)%nat -> mu - delta <= lam e j).
Proof.
  intros j Hj. destruct lemma_s_count_rescaled as [Hc Hnz].
  destruct (sylvester ebar Hnz j Hj) as [Hlt Hge]. rewrite <- Hc in Hlt, Hge.
  assert (Hw : Rabs (lam ebar j - lam e j) <= delta)
    by (apply weyl; [apply sturm_perturbation_bound|exact Hj]).
  apply Rabs_le_inv in Hw. split; intros H; [specialize (Hlt H)|specialize (Hge H)]; lra.
Qed.

End Sturm.

(** ** IEEE binary64 with infinities and NaN: a finite [q] means no overflow

    Flocq's [BinarySingleNaN] models IEEE 754 binary64 exactly (zeros,
    subnormals, infinities, NaN; [mode_NE] = round to nearest even).  The
    code computes the recurrence on IEEE floats and discards a shift unless
    every [q i] is finite and nonzero; then every intermediate ([s k],
    [fl(d - mu)], [fl(s/q)]) was finite and equals the [fl] of the exact
    result of its operands ([sturm_counts_ieee_model]), so the theorems above
    apply.  (A division [x/inf = 0] could hide an overflow, but the
    divisor of every division is an earlier [q], itself checked.)  The IEEE
    operations and their one-step lemmas [Bminus_finite], [Bmult_finite],
    [Bdiv_finite] are [IEEEFinite.v]'s. *)

Section SturmIEEE.

(** The code's IEEE operations (numpy, one IEEE operation per step). *)
Variables (bd be : nat -> b64) (bmu : b64) (n : nat).

Definition bsq (k : nat) : b64 := Bmult (be k) (be k).
Definition bdm (i : nat) : b64 := Bminus (bd i) bmu.

Fixpoint bq (i : nat) : b64 :=
  match i with
  | O => bdm O
  | S k => Bminus (bdm (S k)) (Bdiv (bsq k) (bq k))
  end.

Definition bquot (k : nat) : b64 := Bdiv (bsq k) (bq k).

(** The code's acceptance test: every [q i] finite and nonzero. *)
Hypothesis bq_ok : forall i, (i < n)%nat -> is_finite (bq i) = true /\ B2R (bq i) <> 0.

Let d i := B2R (bd i).
Let e k := B2R (be k).
Let mu := B2R bmu.

Theorem sturm_counts_ieee_model :
  (forall i, (i < n)%nat ->
     is_finite (bd i) = true /\ B2R (bdm i) = dm d mu i /\ B2R (bq i) = q d e mu i) /\
  (forall k, (S k < n)%nat ->
     is_finite (be k) = true /\ B2R (bsq k) = sq e k /\ B2R (bquot k) = quot d e mu k).
Proof.
  assert (Hstep : forall i, (i < n)%nat ->
    is_finite bmu = true /\ is_finite (bd i) = true /\ B2R (bdm i) = dm d mu i /\
    B2R (bq i) = q d e mu i /\
    (forall k, i = S k -> is_finite (be k) = true /\ B2R (bsq k) = sq e k /\
                          B2R (bquot k) = quot d e mu k)).
  { induction i as [|k IH]; intros Hi.
    - destruct (bq_ok O Hi) as [Hf _]. change (bq O) with (bdm O) in Hf |- *.
      destruct (Bminus_finite _ _ Hf) as (H1 & H2 & H3).
      refine (conj H2 (conj H1 (conj H3 (conj H3 _)))). intros k' Hk'. discriminate.
    - destruct (IH ltac:(lia)) as (Hmu & _ & _ & Hqk & _).
      destruct (bq_ok (S k) Hi) as [Hf _]. destruct (bq_ok k ltac:(lia)) as [Hkf Hk0].
      change (bq (S k)) with (Bminus (bdm (S k)) (bquot k)) in Hf |- *.
      destruct (Bminus_finite _ _ Hf) as (Ha & Ht & Hv).
      destruct (Bminus_finite _ _ Ha) as (Hd & _ & Hdm).
      destruct (Bdiv_finite _ _ Hkf Hk0 Ht) as (Hs & Htv).
      destruct (Bmult_finite _ _ Hs) as (He & _ & Hsv).
      assert (Ebsq : B2R (bsq k) = sq e k) by (unfold bsq, sq; rewrite Hsv; reflexivity).
      assert (Ebdm : B2R (bdm (S k)) = dm d mu (S k)) by (unfold bdm, dm; rewrite Hdm; reflexivity).
      assert (Ebquot : B2R (bquot k) = quot d e mu k).
      { unfold bquot, quot. rewrite Htv, Ebsq, Hqk. reflexivity. }
      refine (conj Hmu (conj Hd (conj Ebdm (conj _ _)))).
      + rewrite Hv, Ebdm, Ebquot. reflexivity.
      + intros k' Hk'. injection Hk' as <-. auto. }
  split.
  - intros i Hi. destruct (Hstep i Hi) as (_ & H1 & H2 & H3 & _). auto.
  - intros k Hk. destruct (Hstep (S k) Hk) as (_ & _ & _ & _ & H). apply H. reflexivity.
Qed.

(** The code's guards, on the IEEE values it compares. *)
Hypothesis bguard_e : forall k, (S k < n)%nat -> e k = 0 \/ min_normal < B2R (bsq k).
Hypothesis bguard_quot : forall k, (S k < n)%nat ->
  B2R (bsq k) = 0 \/ min_normal < Rabs (B2R (bquot k)).

(** The linear algebra of [lemma_s_count_enclosure], for the matrix of the
    IEEE inputs. *)
Variable lam : (nat -> R) -> nat -> R.
Hypothesis sylvester : forall f,
  (forall i, (i < n)%nat -> pivots d mu (fun k => f k * f k) i <> 0) ->
  forall j, (j < n)%nat ->
  ((j < negcount (pivots d mu (fun k => (f k * f k)%R)) n)%nat -> lam f j < mu) /\
  ((negcount (pivots d mu (fun k => (f k * f k)%R)) n <= j)%nat -> mu <= lam f j).
Hypothesis weyl : forall f c,
  opbound n n (fun i j => trim d f i j - trim d e i j) c ->
  forall j, (j < n)%nat -> Rabs (lam f j - lam e j) <= c.
(** [delta]: the float [rho] of [sturm_perturbation],
    [nextafter(K emx, +inf)] with [K >= 2 rho] from Arb (F6) and
    [emx = max|e k|] (exact in floats), [>= 2 emx rho] by
    [sturm_perturbation_code]; the code returns [0.0] when there is no
    nonzero [e k]. *)
Variables (emx delta : R).
Hypothesis emax_nonneg : 0 <= emx.
Hypothesis emax_ge : forall k, (S k < n)%nat -> Rabs (e k) <= emx.
Hypothesis delta_ge : 2 * emx * rho <= delta.

(** The Sturm-count enclosure for the code's IEEE computation: the count
    [c] of negative computed [q i] brackets the eigenvalues,
    [lam_j < mu + delta] for [j < c], [lam_j >= mu - delta] for [j >= c]. *)
Theorem sturm_counts_enclosure : forall j, (j < n)%nat ->
  ((j < negcount (fun i => B2R (bq i)) n)%nat -> lam e j < mu + delta) /\
  ((negcount (fun i => B2R (bq i)) n <= j)%nat -> mu - delta <= lam e j).
Proof.
  destruct sturm_counts_ieee_model as [Hq Hs].
  assert (Hc : negcount (fun i => B2R (bq i)) n = negcount (q d e mu) n).
  { apply negcount_ext. intros i Hi. destruct (Hq i Hi) as (_ & _ & ->). tauto. }
  rewrite Hc.
  apply (lemma_s_count_enclosure d e mu n) with (emx := emx).
  - intros i. apply B2R_format.
  - apply B2R_format.
  - intros k Hk. destruct (Hs k Hk) as (_ & E & _). rewrite <- E. apply bguard_e, Hk.
  - intros k Hk. destruct (Hs k Hk) as (_ & E1 & E2). rewrite <- E1, <- E2. apply bguard_quot, Hk.
  - intros i Hi. destruct (Hq i Hi) as (_ & _ & E). rewrite <- E. apply bq_ok, Hi.
  - exact sylvester.
  - exact weyl.
  - exact emax_nonneg.
  - exact emax_ge.
  - exact delta_ge.
Qed.

End SturmIEEE.

(** ** The normalised guard ([tridiagonal._sturm_normalised])

    When [|d i| < 2], [|e k| < 2], [e k = 0] or [|e k| >= 2^-300], [|mu| <= 8]
    (checked by [sturm_counts]; [tridiagonal_eigenvalue_bounds] arranges
    them), the code checks the guards through the single test
    [min_i |q i| >= 2^-400] (NaN propagates through [np.minimum] and fails
    it; an infinite [q i] would pass it, so finiteness is PROVED here, not
    assumed): then every [q i] is finite with [2^-400 <= |q i| <= 2^403]
    and the guards (G1)-(G3) hold ([normalised_guards]), so
    [sturm_counts_enclosure] applies ([sturm_normalised_enclosure]). *)

Lemma fl_abs_le : forall x k, (-1074 <= k)%Z -> Rabs x <= bpow radix2 k -> Rabs (fl x) <= bpow radix2 k.
Proof.
  intros x k Hk H. unfold fl. apply abs_round_le_generic; auto with typeclass_instances.
  apply generic_format_bpow. unfold FLT_exp, emin, prec. lia.
Qed.

Lemma fl_abs_ge : forall x k, (-1074 <= k)%Z -> bpow radix2 k <= Rabs x -> bpow radix2 k <= Rabs (fl x).
Proof.
  intros x k Hk H. unfold fl. apply abs_round_ge_generic; auto with typeclass_instances.
  apply generic_format_bpow. unfold FLT_exp, emin, prec. lia.
Qed.

Lemma no_overflow : forall z k, (-1074 <= k <= 1023)%Z -> Rabs z <= bpow radix2 k ->
  Rlt_bool (Rabs (round radix2 (SpecFloat.fexp prec emax) (BS.round_mode BS.mode_NE) z))
           (bpow radix2 emax) = true.
Proof.
  intros z k Hk H. apply Rlt_bool_true.
  apply Rle_lt_trans with (bpow radix2 k); [apply (fl_abs_le z k); [lia|exact H]|].
  apply bpow_lt. unfold emax. lia.
Qed.

Lemma Bminus_ok : forall (x y : b64) k, is_finite x = true -> is_finite y = true ->
  (-1074 <= k <= 1023)%Z -> Rabs (B2R x - B2R y) <= bpow radix2 k ->
  is_finite (Bminus x y) = true /\ B2R (Bminus x y) = fl (B2R x - B2R y).
Proof.
  intros x y k Hx Hy Hk H. pose proof (BS.Bminus_correct prec emax _ _ BS.mode_NE x y Hx Hy) as C.
  rewrite (no_overflow _ k Hk H) in C. destruct C as (C1 & C2 & _). auto.
Qed.

Lemma Bmult_ok : forall (x y : b64) k, is_finite x = true -> is_finite y = true ->
  (-1074 <= k <= 1023)%Z -> Rabs (B2R x * B2R y) <= bpow radix2 k ->
  is_finite (Bmult x y) = true /\ B2R (Bmult x y) = fl (B2R x * B2R y).
Proof.
  intros x y k Hx Hy Hk H. pose proof (BS.Bmult_correct prec emax _ _ BS.mode_NE x y) as C.
  rewrite (no_overflow _ k Hk H) in C. destruct C as (C1 & C2 & _). rewrite Hx, Hy in C2. auto.
Qed.

Lemma Bdiv_ok : forall (x y : b64) k, is_finite x = true -> B2R y <> 0 ->
  (-1074 <= k <= 1023)%Z -> Rabs (B2R x / B2R y) <= bpow radix2 k ->
  is_finite (Bdiv x y) = true /\ B2R (Bdiv x y) = fl (B2R x / B2R y).
Proof.
  intros x y k Hx Hy Hk H. pose proof (BS.Bdiv_correct prec emax _ _ BS.mode_NE x y Hy) as C.
  rewrite (no_overflow _ k Hk H) in C. destruct C as (C1 & C2 & _). rewrite Hx in C2. auto.
Qed.

Section SturmNormalised.

Variables (bd be : nat -> b64) (bmu : b64) (n : nat).
Hypothesis bd_finite : forall i, is_finite (bd i) = true.
Hypothesis be_finite : forall k, is_finite (be k) = true.
Hypothesis bmu_finite : is_finite bmu = true.
Hypothesis d_small : forall i, (i < n)%nat -> Rabs (B2R (bd i)) < 2.
Hypothesis e_small : forall k, (S k < n)%nat -> Rabs (B2R (be k)) < 2.
Hypothesis e_not_tiny : forall k, (S k < n)%nat ->
  B2R (be k) = 0 \/ bpow radix2 (-300) <= Rabs (B2R (be k)).
Hypothesis mu_small : Rabs (B2R bmu) <= 8.
(** The code's test [min |q i| >= 2^-400]: every FINITE [q i] has
    [|q i| >= 2^-400] (and none is NaN, which is not needed here). *)
Hypothesis normalised_test : forall i, (i < n)%nat ->
  is_finite (bq bd be bmu i) = true -> bpow radix2 (-400) <= Rabs (B2R (bq bd be bmu i)).

Lemma bpow_4 : bpow radix2 4 = 16.
Proof. simpl. lra. Qed.
Lemma bpow_2 : bpow radix2 2 = 4.
Proof. simpl. lra. Qed.

(** One step of the normalised recurrence: [s = fl(e·e) ∈ [0, 4]] over a pivot
    [|q| ≥ 2^-400] is finite-sized ([|s/q| ≤ 2^402]) and [q ≠ 0]. *)
Lemma quotient_bound : forall s q : R, 0 <= s <= 4 -> bpow radix2 (-400) <= Rabs q ->
  q <> 0 /\ Rabs (s / q) <= bpow radix2 402.
Proof.
  intros s q Bs Lk.
  assert (Hq0 : q <> 0).
  { intros Z. rewrite Z, Rabs_R0 in Lk. pose proof (bpow_gt_0 radix2 (-400)). lra. }
  split; [exact Hq0|].
  unfold Rdiv. rewrite Rabs_mult, Rabs_inv.
  replace 402%Z with (2 + 400)%Z by lia. rewrite bpow_plus, bpow_2.
  rewrite (Rabs_pos_eq s) by lra.
  apply Rmult_le_compat; [lra|left; apply Rinv_0_lt_compat; apply Rabs_pos_lt, Hq0|lra|].
  replace (bpow radix2 400) with (/ bpow radix2 (-400)) by (rewrite <- bpow_opp; reflexivity).
  apply Rinv_le_contravar; [apply bpow_gt_0|exact Lk].
Qed.

Lemma bdm_ok : forall i, (i < n)%nat ->
  is_finite (bdm bd bmu i) = true /\ Rabs (B2R (bdm bd bmu i)) <= bpow radix2 4.
Proof.
  intros i Hi. assert (H : Rabs (B2R (bd i) - B2R bmu) <= bpow radix2 4).
  { rewrite bpow_4. pose proof (d_small i Hi). eapply Rle_trans; [apply Rabs_triang|].
    rewrite Rabs_Ropp. lra. }
  destruct (Bminus_ok (bd i) bmu 4 (bd_finite i) bmu_finite ltac:(lia) H) as [F E].
  unfold bdm. split; [exact F|]. rewrite E. apply fl_abs_le; [lia|exact H].
Qed.

Lemma bsq_ok : forall k, (S k < n)%nat ->
  is_finite (bsq be k) = true /\ B2R (bsq be k) = fl (B2R (be k) * B2R (be k)) /\
  0 <= B2R (bsq be k) <= 4 /\
  (B2R (be k) <> 0 -> bpow radix2 (-600) <= B2R (bsq be k)).
Proof.
  intros k Hk. pose proof (e_small k Hk) as He. pose proof (Rabs_pos (B2R (be k))) as Ha.
  assert (H : Rabs (B2R (be k) * B2R (be k)) <= bpow radix2 2).
  { rewrite bpow_2, Rabs_mult. apply Rle_trans with (2 * 2); [apply Rmult_le_compat; lra|lra]. }
  destruct (Bmult_ok (be k) (be k) 2 (be_finite k) (be_finite k) ltac:(lia) H) as [F E].
  assert (Hsq : 0 <= B2R (be k) * B2R (be k)) by apply Rle_0_sqr.
  unfold bsq. refine (conj F (conj E (conj _ _))).
  - rewrite E. split; [apply fl_nonneg, Hsq|].
    pose proof (fl_abs_le _ 2 ltac:(lia) H) as H2. rewrite bpow_2 in H2.
    apply Rabs_le_inv in H2. lra.
  - intros H0. destruct (e_not_tiny k Hk) as [Hz|Ht]; [contradiction|].
    rewrite E. rewrite <- (Rabs_pos_eq (fl _)) by (apply fl_nonneg, Hsq).
    apply fl_abs_ge; [lia|]. rewrite Rabs_mult.
    replace (-600)%Z with (-300 + -300)%Z by lia. rewrite bpow_plus.
    apply Rmult_le_compat; try (left; apply bpow_gt_0); exact Ht.
Qed.

Lemma bq_bounds : forall i, (i < n)%nat ->
  is_finite (bq bd be bmu i) = true /\
  bpow radix2 (-400) <= Rabs (B2R (bq bd be bmu i)) <= bpow radix2 403.
Proof.
  induction i as [|k IH]; intros Hi.
  - destruct (bdm_ok O Hi) as [F B]. change (bq bd be bmu O) with (bdm bd bmu O).
    split; [exact F|]. split; [exact (normalised_test O Hi F)|].
    eapply Rle_trans; [exact B|]. apply bpow_le. lia.
  - destruct (IH ltac:(lia)) as (Fk & Lk & Uk).
    destruct (bsq_ok k Hi) as (Fs & _ & Bs & _).
    destruct (quotient_bound _ _ Bs Lk) as [Hq0 Ht].
    destruct (Bdiv_ok (bsq be k) (bq bd be bmu k) 402 Fs Hq0 ltac:(lia) Ht) as [Ft Et].
    destruct (bdm_ok (S k) Hi) as [Fa Ba].
    assert (Hs : Rabs (B2R (bdm bd bmu (S k)) - B2R (bquot bd be bmu k)) <= bpow radix2 403).
    { unfold bquot. rewrite Et. pose proof (fl_abs_le _ 402 ltac:(lia) Ht) as H2.
      eapply Rle_trans; [apply Rabs_triang|]. rewrite Rabs_Ropp.
      replace 403%Z with (1 + 402)%Z by lia. rewrite bpow_plus.
      assert (bpow radix2 4 <= bpow radix2 402) by (apply bpow_le; lia).
      change (bpow radix2 1) with 2. lra. }
    destruct (Bminus_ok _ _ 403 Fa Ft ltac:(lia) Hs) as [Fq Eq].
    change (bq bd be bmu (S k)) with (Bminus (bdm bd bmu (S k)) (bquot bd be bmu k)).
    split; [exact Fq|]. split.
    + exact (normalised_test (S k) Hi Fq).
    + unfold bquot. rewrite Eq. apply fl_abs_le; [lia|exact Hs].
Qed.

Theorem normalised_guards :
  (forall i, (i < n)%nat -> is_finite (bq bd be bmu i) = true /\ B2R (bq bd be bmu i) <> 0) /\
  (forall k, (S k < n)%nat -> B2R (be k) = 0 \/ min_normal < B2R (bsq be k)) /\
  (forall k, (S k < n)%nat ->
     B2R (bsq be k) = 0 \/ min_normal < Rabs (B2R (bquot bd be bmu k))).
Proof.
  assert (Hmn : min_normal < bpow radix2 (-600)) by (apply bpow_lt; lia).
  split; [|split].
  - intros i Hi. destruct (bq_bounds i Hi) as (F & L & _). split; [exact F|].
    intros Z. rewrite Z, Rabs_R0 in L. pose proof (bpow_gt_0 radix2 (-400)). lra.
  - intros k Hk. destruct (Req_dec (B2R (be k)) 0) as [Z|Z]; [left; exact Z|right].
    destruct (bsq_ok k Hk) as (_ & _ & _ & L). specialize (L Z). lra.
  - intros k Hk. destruct (bsq_ok k Hk) as (Fs & Es & Bs & L).
    destruct (Req_dec (B2R (bsq be k)) 0) as [Z|Z]; [left; exact Z|right].
    assert (Ze : B2R (be k) <> 0).
    { intros Ze. apply Z. rewrite Es, Ze, Rmult_0_l. apply fl_0. }
    specialize (L Ze).
    destruct (bq_bounds k ltac:(lia)) as (Fk & Lk & Uk).
    destruct (quotient_bound _ _ Bs Lk) as [Hq0 Ht].
    destruct (Bdiv_ok (bsq be k) (bq bd be bmu k) 402 Fs Hq0 ltac:(lia) Ht) as [Ft Et].
    unfold bquot. rewrite Et.
    apply Rlt_le_trans with (bpow radix2 (-1003)); [apply bpow_lt; lia|].
    apply fl_abs_ge; [lia|].
    unfold Rdiv. rewrite Rabs_mult, Rabs_inv, (Rabs_pos_eq (B2R (bsq be k))) by lra.
    replace (-1003)%Z with (-600 + - (403))%Z by lia. rewrite bpow_plus, bpow_opp.
    apply Rmult_le_compat; [left; apply bpow_gt_0|left; apply Rinv_0_lt_compat, bpow_gt_0|exact L|].
    apply Rinv_le_contravar; [apply Rabs_pos_lt, Hq0|exact Uk].
Qed.

End SturmNormalised.

(** The normalised path's enclosure: its hypotheses, its test, and the
    linear algebra of [sturm_counts_enclosure]. *)
Theorem sturm_normalised_enclosure :
  forall (bd be : nat -> b64) (bmu : b64) (n : nat),
  (forall i, is_finite (bd i) = true) -> (forall k, is_finite (be k) = true) -> is_finite bmu = true ->
  (forall i, (i < n)%nat -> Rabs (B2R (bd i)) < 2) ->
  (forall k, (S k < n)%nat -> Rabs (B2R (be k)) < 2) ->
  (forall k, (S k < n)%nat -> B2R (be k) = 0 \/ bpow radix2 (-300) <= Rabs (B2R (be k))) ->
  Rabs (B2R bmu) <= 8 ->
  (forall i, (i < n)%nat -> is_finite (bq bd be bmu i) = true ->
     bpow radix2 (-400) <= Rabs (B2R (bq bd be bmu i))) ->
  forall (lam : (nat -> R) -> nat -> R),
  (forall f,
    (forall i, (i < n)%nat -> pivots (fun i => B2R (bd i)) (B2R bmu) (fun k => f k * f k) i <> 0) ->
    forall j, (j < n)%nat ->
    ((j < negcount (pivots (fun i => B2R (bd i)) (B2R bmu) (fun k => (f k * f k)%R)) n)%nat ->
       lam f j < B2R bmu) /\
    ((negcount (pivots (fun i => B2R (bd i)) (B2R bmu) (fun k => (f k * f k)%R)) n <= j)%nat ->
       B2R bmu <= lam f j)) ->
  (forall f c,
    opbound n n (fun i j => trim (fun i => B2R (bd i)) f i j - trim (fun i => B2R (bd i)) (fun k => B2R (be k)) i j) c ->
    forall j, (j < n)%nat -> Rabs (lam f j - lam (fun k => B2R (be k)) j) <= c) ->
  forall emx delta, 0 <= emx -> (forall k, (S k < n)%nat -> Rabs (B2R (be k)) <= emx) ->
  2 * emx * rho <= delta ->
  forall j, (j < n)%nat ->
  ((j < negcount (fun i => B2R (bq bd be bmu i)) n)%nat -> lam (fun k => B2R (be k)) j < B2R bmu + delta) /\
  ((negcount (fun i => B2R (bq bd be bmu i)) n <= j)%nat -> B2R bmu - delta <= lam (fun k => B2R (be k)) j).
Proof.
  intros bd be bmu n Hd He Hm Hds Hes Het Hms Ht lam Hsyl Hweyl emx delta H0 Hemx Hdl.
  destruct (normalised_guards bd be bmu n Hd He Hm Hds Hes Het Hms Ht) as (G3 & G1 & G2).
  apply (sturm_counts_enclosure bd be bmu n G3 G1 G2 lam Hsyl Hweyl emx delta H0 Hemx Hdl).
Qed.

(** ** The float ends of [tridiagonal_eigenvalue_bounds]

    For eigenvalue [j] (ascending, 0-based), [muL] is a valid shift with
    count [<= j] and [muU] one with count [>= j+1] ([_best_shifts]), so
    [muL - rho <= lam_j < muU + rho] ([sturm_counts_enclosure]); the code
    returns [lo = nextafter(fl(muL - rho), -inf)],
    [hi = nextafter(fl(muU + rho), +inf)] (Lemma 10.1, [OneStep.v]; an
    overflow gives [-inf]/[+inf], trivially valid). *)
Theorem tridiagonal_eigenvalue_bounds_outward : forall lamj muL muU rc,
  muL - rc <= lamj -> lamj < muU + rc ->
  pred radix2 fexp (fl (muL - rc)) <= lamj <= succ radix2 fexp (fl (muU + rc)).
Proof.
  intros lamj muL muU rc HL HU. split.
  - apply step_down. exact HL.
  - apply step_up. lra.
Qed.

(** ** Scaling back by [2^-t] with the round-trip test

    [tridiagonal_eigenvalue_bounds] step 1 and its last step: for a float
    [x] and [y = fl(x 2^k)], the code takes [y] as exact when
    [fl(y 2^-k) = x] ([np.ldexp] round trip), and otherwise steps [y]
    outward ([np.nextafter]).  The round trip is a sound exactness test
    ([roundtrip_exact]): one of the two scalings is upward, hence exact.
    (IEEE overflow: an overflowing [y] is [+-inf], whose round trip fails;
    [nextafter(+inf, -inf) = DBL_MAX <= x 2^k] and
    [nextafter(-inf, +inf) = -DBL_MAX >= x 2^k] are then still valid ends,
    and an infinite end is trivially valid.) *)
Theorem roundtrip_exact : forall x k, format x ->
  fl (fl (x * bpow radix2 k) * bpow radix2 (- k)) = x -> fl (x * bpow radix2 k) = x * bpow radix2 k.
Proof.
  intros x k Hx H. destruct (Z_le_gt_dec 0 k) as [Hk|Hk].
  - apply scale_up_exact; assumption.
  - rewrite scale_up_exact in H by (apply fl_format || lia).
    set (y := fl (x * bpow radix2 k)) in *. clearbody y.
    rewrite <- H, Rmult_assoc, <- bpow_plus. replace (- k + k)%Z with 0%Z by lia.
    simpl bpow. ring.
Qed.

(** The lower end scaled back: [lo <= X] (real) gives
    [(round trip ? lo2 : pred lo2) <= X 2^k], [lo2 = fl(lo 2^k)]; the upper
    end dually. *)
Theorem scaled_back_lower : forall lo X k, format lo -> lo <= X ->
  (if Req_EM_T (fl (fl (lo * bpow radix2 k) * bpow radix2 (- k))) lo
   then fl (lo * bpow radix2 k) else pred radix2 fexp (fl (lo * bpow radix2 k))) <= X * bpow radix2 k.
Proof.
  intros lo X k Hf H. pose proof (bpow_gt_0 radix2 k).
  assert (Hs : lo * bpow radix2 k <= X * bpow radix2 k) by (apply Rmult_le_compat_r; lra).
  destruct (Req_EM_T _ _) as [E|_].
  - rewrite roundtrip_exact by assumption. exact Hs.
  - apply step_down. exact Hs.
Qed.

Theorem scaled_back_upper : forall hi X k, format hi -> X <= hi ->
  X * bpow radix2 k <=
  (if Req_EM_T (fl (fl (hi * bpow radix2 k) * bpow radix2 (- k))) hi
   then fl (hi * bpow radix2 k) else succ radix2 fexp (fl (hi * bpow radix2 k))).
Proof.
  intros hi X k Hf H. pose proof (bpow_gt_0 radix2 k).
  assert (Hs : X * bpow radix2 k <= hi * bpow radix2 k) by (apply Rmult_le_compat_r; lra).
  destruct (Req_EM_T _ _) as [E|_].
  - rewrite roundtrip_exact by assumption. exact Hs.
  - apply step_up. exact Hs.
Qed.

(** ** Steps 1-2 of [tridiagonal_eigenvalue_bounds]: the distance of [T']
    (the scaled [T_s] with tiny off-diagonals zeroed) from [2^t T]

    Entrywise [|fl(x 2^t) - x 2^t| <= eta/2] ([Scaling.scale_error]; [0]
    when the round trip shows the scaling exact, [roundtrip_exact]) and a
    zeroed off-diagonal moves by [|e_s| <= max tiny]; so
    [NormBounds.trim_diff_opbound] with [al = eta/2], [be = eta/2 + max tiny]
    (or [0], [max tiny]) gives [||2^t T - T'||_2 <= 3 eta/2 + 2 max tiny],
    below the code's [extra] ([3 eta] if inexact, plus
    [nextafter(2 max tiny)], summed upward).  With Weyl
    ([|lambda_j(2^t T) - lambda_j(T')| <= ||2^t T - T'||_2], a hypothesis)
    the brackets of [T'] widen outward by [extra]: *)
Theorem tridiagonal_bounds_extra : forall lamT lamTp lo hi x extra,
  Rabs (lamT - lamTp) <= x -> x <= extra -> lo <= lamTp <= hi ->
  pred radix2 fexp (fl (lo - extra)) <= lamT <= succ radix2 fexp (fl (hi + extra)).
Proof.
  intros lamT lamTp lo hi x extra Hw Hx [Hl Hh]. apply Rabs_le_inv in Hw. split.
  - apply step_down. lra.
  - apply step_up. lra.
Qed.

(** ** [gershgorin_bounds]: the default ends

    Per row [a_i = |e_i|] (0 in the last row), then for [i >= 1]
    [a_i = |e_(i-1)|] where [a_i = 0], else [nextafter(fl(a_i + |e_(i-1)|), +inf)];
    [lo_i = d_i] where [a_i = 0], else [nextafter(fl(d_i - a_i), -inf)], and
    dually [hi_i]; [glo = min lo], [ghi = max hi].  Then [a_i >= r_i] (the
    row's off-diagonal absolute sum), [lo_i <= d_i - r_i],
    [d_i + r_i <= hi_i], so [NormBounds.gershgorin_tridiagonal] puts every
    eigenvalue in [[glo, ghi]]. *)
Lemma gershgorin_a_upper : forall x y, 0 <= x -> 0 <= y ->
  x + y <= (if Req_EM_T x 0 then y else succ radix2 fexp (fl (x + y))).
Proof.
  intros x y Hx Hy. destruct (Req_EM_T x 0) as [->|_]; [lra|]. apply step_up. lra.
Qed.

Lemma gershgorin_row_ends : forall di a r, 0 <= r <= a ->
  (if Req_EM_T a 0 then di else pred radix2 fexp (fl (di - a))) <= di - r /\
  di + r <= (if Req_EM_T a 0 then di else succ radix2 fexp (fl (di + a))).
Proof.
  intros di a r [H0 H1]. destruct (Req_EM_T a 0) as [->|_].
  - assert (r = 0) by lra. subst r. lra.
  - split; [apply step_down|apply step_up]; lra.
Qed.

(** ** The sign-bit count (cd9a2f4)

    [_sturm_normalised] counts the sign bits ([Q.view(uint64) >> 63]: IEEE
    754's sign field, Flocq's [Bsign]) instead of testing [q < 0].  For a
    finite nonzero binary64 float the sign bit is set exactly when it is
    negative ([sign_bit_negative]), so wherever the guard holds (every [q]
    finite and nonzero; a NaN fails the [min |q| >= 2^-400] test, a zero
    too) the two counts agree ([signcount_negcount]): every theorem above
    about [negcount] is about the code's count. *)
Lemma sign_bit_negative : forall x : b64, is_finite x = true -> B2R x <> 0 -> (BS.Bsign x = true <-> B2R x < 0).
Proof.
  intros [s|s| |s mx ex Hx] Hf Hz; simpl in Hf; try discriminate.
  - simpl in Hz. lra.
  - simpl. destruct s; simpl.
    + split; [intros _|reflexivity]. apply F2R_lt_0. simpl. lia.
    + split; [discriminate|]. intros H. exfalso. assert (0 < F2R (Float radix2 (Z.pos mx) ex)) by (apply F2R_gt_0; simpl; lia).
      simpl in H. lra.
Qed.

Fixpoint signcount (f : nat -> b64) (m : nat) : nat :=
  match m with
  | O => O
  | S m' => (signcount f m' + (if BS.Bsign (f m') then 1 else 0))%nat
  end.

Theorem signcount_negcount : forall f m, (forall i, (i < m)%nat -> is_finite (f i) = true /\ B2R (f i) <> 0) ->
  signcount f m = negcount (fun i => B2R (f i)) m.
Proof.
  intros f m H. induction m as [|m IH]; [reflexivity|]. simpl.
  rewrite IH by (intros i Hi; apply H; lia). f_equal.
  destruct (H m ltac:(lia)) as [Hf Hz]. pose proof (sign_bit_negative (f m) Hf Hz) as E.
  destruct (BS.Bsign (f m)); destruct (Rlt_dec (B2R (f m)) 0); try reflexivity.
  - exfalso. apply n, E. reflexivity.
  - exfalso. apply E in r. discriminate.
Qed.

(** [sturm_perturbation] since 757178f: [delta = nextafter(K * emx, +inf)]
    with a float [K >= 2 rho] from Arb ([tridiagonal._rho_factor], F6):
    [delta_ge] holds (Lemma 10.1; [emx = max|e k|] is exact). *)
Lemma sturm_perturbation_code : forall emx K, 0 <= emx -> 2 * rho <= K -> 2 * emx * rho <= succ radix2 fexp (fl (K * emx)).
Proof.
  intros emx K He HK. apply step_up. pose proof rho_nonneg. nra.
Qed.
