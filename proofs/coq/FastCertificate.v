(** * Fast-mode certificate: the float inflation and the residual entries

    Backs [proofs/enclosure.md] §2 Lemma 2.2 (the float computation
    [(v + c) * f] of [fperror._inflate]) and §3 Lemma 3.2 entrywise (the
    computed residual [fperror.residual_norm_bound]: [V = fl(diag(s) Y^T)],
    [P = fl(X V)]).  Lemma 3.1's exact diagonal shift is
    [FPModel.gram_diagonal_shift_exact]; the spectral-norm steps of
    Lemmas 2.3, 2.4, 3.1, 3.2 (norm inequalities F4, monotonicity) are prose. *)

From Coq Require Import Reals Psatz List Permutation Arith.
From Flocq Require Import Core.
From Certbound Require Import FPModel Summation DotProduct.
Import ListNotations.
Open Scope R_scope.

Lemma k_bound : forall k : nat, INR k <= 2 ^ 40 -> (Z.of_nat k <= 1099511627776)%Z.
Proof. intros k Hk. apply le_IZR. rewrite <- INR_IZR_INZ. simpl in Hk. lra. Qed.

(** The constants of [_inflate] are floats, so computing them is exact:
    [c = 2(k+2) eta] and [f = 1 + 2(k+2) u] for [k <= 2^40]. *)
Lemma inflate_c_format : forall k : nat, INR k <= 2 ^ 40 -> format (2 * (INR k + 2) * eta).
Proof.
  intros k Hk. apply generic_format_FLT.
  apply FLT_spec with (f := Float radix2 (2 * (Z.of_nat k + 2)) (-1074)).
  - unfold F2R, eta. cbn [Fnum Fexp]. rewrite mult_IZR, plus_IZR, <- INR_IZR_INZ. reflexivity.
  - cbn [Fnum]. unfold prec. pose proof (k_bound k Hk). apply Z.abs_lt. change (radix2 ^ 53)%Z with 9007199254740992%Z. lia.
  - simpl. unfold emin. lia.
Qed.

Lemma inflate_f_format : forall k : nat, INR k <= 2 ^ 40 -> format (1 + 2 * (INR k + 2) * u).
Proof.
  intros k Hk. apply generic_format_FLT.
  apply FLT_spec with (f := Float radix2 (2 ^ 52 + (Z.of_nat k + 2)) (-52)).
  - unfold F2R, u. cbn [Fnum Fexp]. rewrite plus_IZR, plus_IZR, <- INR_IZR_INZ.
    change (bpow radix2 (-52)) with (/ 4503599627370496).
    change (bpow radix2 (-53)) with (/ 9007199254740992).
    change (IZR (2 ^ 52)) with 4503599627370496. field.
  - cbn [Fnum]. unfold prec. pose proof (k_bound k Hk). apply Z.abs_lt. change (radix2 ^ 53)%Z with 9007199254740992%Z. change (2 ^ 52)%Z with 4503599627370496%Z. lia.
  - simpl. unfold emin. lia.
Qed.

(** Lemma 2.2: if [v = fl(sum of k nonnegative products)] (so, by
    [DotProduct.dot_nonneg_upper], [(1-gamma_k) S - k eta <= v]) then the two
    rounded operations [fl(fl(v + c) * f)] of [_inflate] give an upper bound
    of the exact sum [S], for [1 <= k <= 2^40]. *)
Theorem inflate_upper :
  forall (k : nat) (v S : R),
  (1 <= k)%nat -> INR k <= 2 ^ 40 -> format v -> 0 <= v -> 0 <= S ->
  (1 - gamma k) * S - INR k * eta <= v ->
  S <= fl (fl (v + 2 * (INR k + 2) * eta) * (1 + 2 * (INR k + 2) * u)).
Proof.
  intros k v S Hk1 Hk Hv Hv0 HS Hdot.
  set (K := INR k) in *. set (c := 2 * (K + 2) * eta). set (f := 1 + 2 * (K + 2) * u).
  pose proof u_pos as Hu. pose proof u_small as Hu'. pose proof eta_pos as He.
  assert (HK1 : 1 <= K) by (unfold K; replace 1 with (INR 1) by reflexivity; apply le_INR; lia).
  assert (Hu53 : u <= / 9007199254740992) by (simpl in Hu'; lra).
  assert (HKu : K * u <= / 8192).
  { apply Rle_trans with (2 ^ 40 * / 9007199254740992); [|simpl; lra].
    apply Rmult_le_compat; lra. }
  set (a := K * u) in *. assert (Ha0 : 0 < a) by (unfold a; apply Rmult_lt_0_compat; lra).
  assert (Hc : 0 <= c) by (unfold c; nra).
  assert (Hf : f = 1 + 2 * a + 4 * u) by (unfold f, a; ring).
  (* first rounding: an addition of two floats, no underflow term *)
  pose proof (fl_add_error v c Hv (inflate_c_format k Hk)) as H1.
  set (t := fl (v + c)) in *.
  rewrite (Rabs_pos_eq (v + c)) in H1 by lra. apply Rabs_le_inv in H1.
  assert (Ht : (1 - u) * (v + c) <= t) by lra.
  assert (Ht0 : 0 <= t) by nra.
  (* second rounding: a product, with the underflow term *)
  pose proof (fl_error_abs (t * f)) as H2.
  assert (Hf0 : 1 <= f) by (rewrite Hf; lra).
  rewrite (Rabs_pos_eq (t * f)) in H2 by nra. apply Rabs_le_inv in H2.
  assert (Hres : (1 - u) * (t * f) - eta / 2 <= fl (t * f)) by lra.
  (* 1/(1 - gamma_k) algebra *)
  assert (Hg : gamma k = a / (1 - a)) by reflexivity.
  assert (Hg1 : 1 - gamma k = (1 - 2 * a) / (1 - a)) by (rewrite Hg; field; lra).
  assert (HA : 1 + 2 * a <= (1 - u) * (1 - u) * f) by (rewrite Hf; nra).
  assert (HB : 1 <= (1 + 2 * a) * (1 - gamma k)).
  { rewrite Hg1. apply Rmult_le_reg_r with (1 - a); [lra|].
    unfold Rdiv. rewrite Rmult_assoc, (Rmult_assoc _ (/ (1 - a))), Rinv_l by lra. nra. }
  assert (HD : / 2 <= 1 - gamma k).
  { rewrite Hg1. apply Rmult_le_reg_r with (1 - a); [lra|].
    unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. nra. }
  assert (Hlow : (1 - u) * (1 - u) * f * v + ((1 - u) * (1 - u) * f * c - eta / 2) <= fl (t * f)).
  { apply Rle_trans with ((1 - u) * (t * f) - eta / 2); [|exact Hres].
    assert ((1 - u) * (v + c) * f <= t * f) by (apply Rmult_le_compat_r; lra).
    assert (0 <= 1 - u) by lra. nra. }
  assert (HC : (1 - 2 * u) * c <= (1 - u) * (1 - u) * f * c).
  { apply Rmult_le_compat_r; [exact Hc|]. nra. }
  assert (Hc2 : (2 * K + 7 / 2) * eta <= (1 - 2 * u) * c).
  { replace ((1 - 2 * u) * c) with ((2 * K + 4 - 4 * a - 8 * u) * eta) by (unfold c, a; ring).
    apply Rmult_le_compat_r; lra. }
  assert (HKe : 0 <= K * eta) by (apply Rmult_le_pos; lra).
  assert (Hcη : 0 <= (1 - 2 * u) * c - eta / 2) by lra.
  (* (1 - gamma) * result >= v + K eta >= (1 - gamma) S *)
  assert (Hv1 : v <= (1 - gamma k) * ((1 - u) * (1 - u) * f * v)).
  { assert (1 <= (1 - gamma k) * ((1 - u) * (1 - u) * f)).
    { apply Rle_trans with ((1 + 2 * a) * (1 - gamma k)); [exact HB|].
      rewrite Rmult_comm. apply Rmult_le_compat_l; lra. }
    nra. }
  assert (Heta : K * eta <= (1 - gamma k) * ((1 - u) * (1 - u) * f * c - eta / 2)).
  { apply Rle_trans with (/ 2 * ((1 - 2 * u) * c - eta / 2)).
    - lra.
    - apply Rmult_le_compat; lra. }
  assert (Hfin : (1 - gamma k) * S <= (1 - gamma k) * fl (t * f)).
  { assert ((1 - gamma k) * ((1 - u) * (1 - u) * f * v + ((1 - u) * (1 - u) * f * c - eta / 2))
            <= (1 - gamma k) * fl (t * f)) by (apply Rmult_le_compat_l; lra).
    lra. }
  apply Rmult_le_reg_l in Hfin; lra.
Qed.

(** ** Lemma 3.2, one entry of [P = fl(X fl(diag(s) Y^T))].
    For a row [x] of [X], the vector [s], a row [y] of [Y] (triples
    [(x_l, s_l, y_l)]), with [v_l = fl(s_l y_l)] and [p] any classical
    evaluation of [sum_l x_l v_l] (any tree over the pairs [(x_l, v_l)], any
    order, with or without FMA):
    [|p - sum x_l s_l y_l| <= gamma_(r+1) sum |x_l||s_l||y_l| + (r + sum|x_l|) eta],
    within the code's entrywise constant [(4r + 4 max_i sum_l |x_il| + 4) eta]. *)
Definition scaled (q : R * R * R) : R * R := let '(x, s, y) := q in (x, fl (s * y)).
Definition exact3 (q : R * R * R) : R := let '(x, s, y) := q in x * (s * y).
Definition abs3 (q : R * R * R) : R := let '(x, s, y) := q in Rabs x * (Rabs s * Rabs y).
Definition absx (q : R * R * R) : R := let '(x, _, _) := q in Rabs x.

Lemma lsum_map_le : forall {A} (f g : A -> R) l, (forall q, In q l -> f q <= g q) -> lsum (map f l) <= lsum (map g l).
Proof.
  intros A f g l H. induction l as [|q l IH]; simpl; [lra|].
  unfold lsum in *; simpl. pose proof (H q (or_introl eq_refl)).
  assert (fold_right Rplus 0 (map f l) <= fold_right Rplus 0 (map g l)) by (apply IH; intros; apply H; right; auto).
  lra.
Qed.

Lemma lsum_map_plus : forall {A} (f g : A -> R) l, lsum (map (fun q => f q + g q) l) = lsum (map f l) + lsum (map g l).
Proof. intros A f g l. induction l; unfold lsum in *; simpl; [ring | rewrite IHl; ring]. Qed.

Lemma lsum_map_scale : forall {A} (f : A -> R) c l, lsum (map (fun q => c * f q) l) = c * lsum (map f l).
Proof. intros A f c l. induction l; unfold lsum in *; simpl; [ring | rewrite IHl; ring]. Qed.

Lemma lsum_map_abs : forall {A} (f : A -> R) l, Rabs (lsum (map f l)) <= lsum (map (fun q => Rabs (f q)) l).
Proof.
  intros A f l. induction l; unfold lsum in *; simpl; [rewrite Rabs_R0; lra|].
  eapply Rle_trans; [apply Rabs_triang | lra].
Qed.

Lemma lsum_map_nonneg : forall {A} (f : A -> R) l, (forall q, 0 <= f q) -> 0 <= lsum (map f l).
Proof. intros A f l H. induction l; unfold lsum in *; simpl; [lra | pose proof (H a); lra]. Qed.

Theorem residual_entry_error :
  forall (qs : list (R * R * R)) (t : dtree),
  Permutation (dpairs t) (map scaled qs) -> INR (S (length qs)) * u <= / 2 ->
  Rabs (dfl t - lsum (map exact3 qs))
    <= gamma (S (length qs)) * lsum (map abs3 qs) + (INR (length qs) + lsum (map absx qs)) * eta.
Proof.
  intros qs t Hp Hr.
  set (r := length qs) in *.
  assert (Hlen : length (map scaled qs) = r) by (apply map_length).
  assert (Hr' : INR r * u <= / 2).
  { apply Rle_trans with (INR (S r) * u); [|exact Hr]. apply Rmult_le_compat_r; [left; apply u_pos|].
    apply le_INR; lia. }
  pose proof (dot_any_order (map scaled qs) t Hp ltac:(rewrite Hlen; exact Hr')) as H.
  rewrite Hlen in H.
  pose proof u_pos. pose proof eta_pos.
  assert (HrS : INR (S r) * u < 1) by lra.
  assert (HrU : INR r * u < 1) by lra.
  pose proof (gamma_step r HrS) as Gs. pose proof (gamma_nonneg r HrU) as G0.
  pose proof (gamma_le_2ku r Hr') as G1.
  assert (G2 : gamma r <= 1) by lra.
  (* dot(scaled) vs exact: entrywise |x_l v_l - x_l s_l y_l| <= u |x||s||y| + |x| eta/2 *)
  assert (Hdot : dot (map scaled qs) = lsum (map (fun q => let '(x, s, y) := q in x * fl (s * y)) qs)).
  { unfold dot. rewrite map_map. f_equal. apply map_ext. intros [[x s] y]. reflexivity. }
  assert (Habs : absdot (map scaled qs) = lsum (map (fun q => let '(x, s, y) := q in Rabs x * Rabs (fl (s * y))) qs)).
  { unfold absdot. rewrite map_map. f_equal. apply map_ext. intros [[x s] y]. reflexivity. }
  assert (Hent : forall q : R * R * R,
            Rabs ((let '(x, s, y) := q in x * fl (s * y)) - exact3 q) <= u * abs3 q + absx q * (eta / 2)).
  { intros [[x s] y]. unfold exact3, abs3, absx.
    replace (x * fl (s * y) - x * (s * y)) with (x * (fl (s * y) - s * y)) by ring.
    rewrite Rabs_mult. pose proof (fl_error_abs (s * y)) as Fe. rewrite (Rabs_mult s y) in Fe.
    pose proof (Rabs_pos x).
    assert (Rabs x * Rabs (fl (s * y) - s * y) <= Rabs x * (u * (Rabs s * Rabs y) + eta / 2))
      by (apply Rmult_le_compat_l; lra).
    lra. }
  assert (Habs_ent : forall q : R * R * R,
            (let '(x, s, y) := q in Rabs x * Rabs (fl (s * y))) <= (1 + u) * abs3 q + absx q * (eta / 2)).
  { intros [[x s] y]. unfold abs3, absx. pose proof (fl_error_abs (s * y)) as Fe.
    rewrite (Rabs_mult s y) in Fe.
    assert (Fa : Rabs (fl (s * y)) <= (1 + u) * (Rabs s * Rabs y) + eta / 2).
    { assert (Ft : Rabs (fl (s * y)) <= Rabs (s * y) + Rabs (fl (s * y) - s * y)).
      { replace (fl (s * y)) with (s * y + (fl (s * y) - s * y)) at 1 by ring. apply Rabs_triang. }
      rewrite (Rabs_mult s y) in Ft. lra. }
    pose proof (Rabs_pos x).
    assert (Rabs x * Rabs (fl (s * y)) <= Rabs x * ((1 + u) * (Rabs s * Rabs y) + eta / 2))
      by (apply Rmult_le_compat_l; lra).
    lra. }
  set (A := lsum (map abs3 qs)). set (X := lsum (map absx qs)).
  assert (HA0 : 0 <= A) by (unfold A; apply lsum_map_nonneg; intros [[x s] y]; unfold abs3;
    apply Rmult_le_pos; [apply Rabs_pos | apply Rmult_le_pos; apply Rabs_pos]).
  assert (HX0 : 0 <= X) by (unfold X; apply lsum_map_nonneg; intros [[x s] y]; apply Rabs_pos).
  assert (Hdiff : Rabs (dot (map scaled qs) - lsum (map exact3 qs)) <= u * A + X * (eta / 2)).
  { rewrite Hdot.
    replace (lsum (map (fun q : R * R * R => let '(x, s, y) := q in x * fl (s * y)) qs) - lsum (map exact3 qs))
      with (lsum (map (fun q => (let '(x, s, y) := q in x * fl (s * y)) + (-1) * exact3 q) qs)).
    2: { rewrite lsum_map_plus, lsum_map_scale. ring. }
    eapply Rle_trans; [apply lsum_map_abs|].
    eapply Rle_trans.
    - apply lsum_map_le with (g := fun q => u * abs3 q + absx q * (eta / 2)). intros q _.
      replace ((let '(x, s, y) := q in x * fl (s * y)) + -1 * exact3 q)
        with ((let '(x, s, y) := q in x * fl (s * y)) - exact3 q) by ring. apply Hent.
    - rewrite lsum_map_plus, lsum_map_scale.
      replace (map (fun q => absx q * (eta / 2)) qs) with (map (fun q => (eta / 2) * absx q) qs)
        by (apply map_ext; intros; ring).
      rewrite lsum_map_scale. fold A X. lra. }
  assert (HabsB : absdot (map scaled qs) <= (1 + u) * A + X * (eta / 2)).
  { rewrite Habs. eapply Rle_trans; [apply lsum_map_le with (g := fun q => (1 + u) * abs3 q + absx q * (eta / 2)); intros q _; apply Habs_ent|].
    rewrite lsum_map_plus, lsum_map_scale.
    replace (map (fun q => absx q * (eta / 2)) qs) with (map (fun q => (eta / 2) * absx q) qs)
      by (apply map_ext; intros; ring).
    rewrite lsum_map_scale. fold A X. lra. }
  assert (Htri : Rabs (dfl t - lsum (map exact3 qs))
                 <= Rabs (dfl t - dot (map scaled qs)) + Rabs (dot (map scaled qs) - lsum (map exact3 qs))).
  { replace (dfl t - lsum (map exact3 qs))
      with ((dfl t - dot (map scaled qs)) + (dot (map scaled qs) - lsum (map exact3 qs))) by ring.
    apply Rabs_triang. }
  assert (gamma r * absdot (map scaled qs) <= gamma r * ((1 + u) * A + X * (eta / 2)))
    by (apply Rmult_le_compat_l; lra).
  assert (gamma r * (X * (eta / 2)) <= X * (eta / 2)) by (rewrite <- (Rmult_1_l (X * (eta / 2))) at 2;
    apply Rmult_le_compat_r; [apply Rmult_le_pos; lra | lra]).
  assert (((1 + u) * gamma r + u) * A <= gamma (S r) * A) by (apply Rmult_le_compat_r; lra).
  lra.
Qed.
