(** * One entry of a chunked residual with an inexact middle factor

    Backs the entrywise step of [proofs/enclosure.md] Lemma 3.2' (the
    telescoping of the chunk subtractions) and Lemma 3.4, and of
    [proofs/enclosure-gram.md] Lemma 3.4-T; code: [fperror.residual_norm_bound],
    [symmetric_residual_norm_bound], [tridiagonal_residual_norm_bound]
    (their shared block loop [_symmetric_residual_blocks]).

    One entry [(i,j)]: [R_0 = g] (the float [G_ij] or [W_ij]), for chunks
    [c = 1..q] of the inner index [R_c = fl(R_(c-1) - p_c)] where [p_c] is
    the chunk's GEMM entry, ANY classical evaluation (any tree of rounded
    products, additions, FMAs; [DotProduct.v]) of [sum_(l in c) x_l v_l];
    [x_l] is a float of the left factor, [v_l] a float of the middle factor
    [V] with [|v_l - w_l| <= gamma_s a_l + eps] and [|w_l| <= a_l] for the
    exact [w_l]:
    - Lemma 3.2/3.4: [v_l = fl(s_l y_l)], [w_l = s_l y_l], [s = 1],
      [eps = eta/2] ([v_entry_product]);
    - Lemma 3.4-T: [v_l = y_(jl)], a rounded sum of [<= 3] rounded products
      ([Y = fl(Q T)]), [w_l = (Q T)_(jl)], [a_l = (|Q||T|)_(jl)], [s = 3],
      [eps = 3 eta] ([v_entry_dot]).
    Then ([chunked_residual_entry])
    [|(g - sum_l x_l w_l) - R_q| <= 2u sum_c |R_c| + gamma_(b+s) sum_l |x_l| a_l
                                    + 2 eps sum_l |x_l| + m eta]
    for chunks of [<= b] terms, [m] terms in all: Lemma 3.4-T's
    [2u sum|R_c| + gamma_(b+3) (N_T)_ij + (m + 6 sum_l|q_il|) eta], within its
    [(2m + 12 max_i sum_l |q_il|) eta] and the code's
    [(4m + 4 maxrow3 + 4) eta] ([lemma_3_4t_constant]). *)

From Coq Require Import Reals Psatz List Permutation Arith.
From Flocq Require Import Core.
From Certbound Require Import FPModel Summation DotProduct.
Import ListNotations.
Open Scope R_scope.

(** Higham's Lemma 3.3: [gamma_j + gamma_k + gamma_j gamma_k <= gamma_(j+k)]. *)
Lemma gamma_add : forall j k, INR (j + k) * u < 1 ->
  gamma j + gamma k + gamma j * gamma k <= gamma (j + k).
Proof.
  intros j k H. unfold gamma. rewrite plus_INR in *.
  pose proof (pos_INR j). pose proof (pos_INR k). pose proof u_pos.
  assert (Hj : 0 < 1 - INR j * u) by nra. assert (Hk : 0 < 1 - INR k * u) by nra.
  assert (Hjk : 0 < 1 - (INR j + INR k) * u) by lra.
  replace (INR j * u / (1 - INR j * u) + INR k * u / (1 - INR k * u)
           + INR j * u / (1 - INR j * u) * (INR k * u / (1 - INR k * u)))
    with (1 / ((1 - INR j * u) * (1 - INR k * u)) - 1) by (field; lra).
  replace ((INR j + INR k) * u / (1 - (INR j + INR k) * u)) with (1 / (1 - (INR j + INR k) * u) - 1)
    by (field; lra).
  apply Rplus_le_compat_r. unfold Rdiv. rewrite !Rmult_1_l.
  apply Rinv_le_contravar; [exact Hjk|].
  assert (0 <= INR j * u * (INR k * u)) by (apply Rmult_le_pos; apply Rmult_le_pos; lra). nra.
Qed.

(** A quadruple [(x, v, w, a)] per inner index. *)
Definition quad := (R * R * R * R)%type.
Definition xv (q : quad) : R * R := let '(x, v, _, _) := q in (x, v).
Definition xw (q : quad) : R := let '(x, _, w, _) := q in x * w.
Definition xa (q : quad) : R := let '(x, _, _, a) := q in Rabs x * a.
Definition ax (q : quad) : R := let '(x, _, _, _) := q in Rabs x.
Definition xvv (q : quad) : R := let '(x, v, _, _) := q in x * v.
Definition axv (q : quad) : R := let '(x, v, _, _) := q in Rabs x * Rabs v.
Definition quad_ok (s : nat) (eps : R) (q : quad) : Prop :=
  let '(_, v, w, a) := q in Rabs (v - w) <= gamma s * a + eps /\ Rabs w <= a.

Lemma lsum_app : forall l1 l2, lsum (l1 ++ l2) = lsum l1 + lsum l2.
Proof. induction l1 as [|x l IH]; intros l2; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma lsum_le_map : forall {A} (f g : A -> R) l, (forall q, In q l -> f q <= g q) ->
  lsum (map f l) <= lsum (map g l).
Proof.
  intros A f g l. induction l as [|x l IH]; intros H; simpl; [lra|].
  apply Rplus_le_compat; [apply H; left; reflexivity|apply IH; intros; apply H; right; assumption].
Qed.

Lemma lsum_plus_map : forall {A} (f g : A -> R) l,
  lsum (map (fun q => f q + g q) l) = lsum (map f l) + lsum (map g l).
Proof. intros A f g l. induction l as [|x l IH]; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma lsum_scale_map : forall {A} (f : A -> R) c l, lsum (map (fun q => c * f q) l) = c * lsum (map f l).
Proof. intros A f c l. induction l as [|x l IH]; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma lsum_abs_map : forall {A} (f : A -> R) l, Rabs (lsum (map f l)) <= lsum (map (fun q => Rabs (f q)) l).
Proof.
  intros A f l. induction l as [|x l IH]; simpl; [rewrite Rabs_R0; lra|].
  eapply Rle_trans; [apply Rabs_triang|]. lra.
Qed.

Lemma lsum_nonneg_map : forall {A} (f : A -> R) l, (forall q, 0 <= f q) -> 0 <= lsum (map f l).
Proof. intros A f l H. induction l as [|x l IH]; simpl; [lra|]. pose proof (H x). lra. Qed.

Lemma lsum_nonneg_in : forall {A} (f : A -> R) l, (forall q, In q l -> 0 <= f q) -> 0 <= lsum (map f l).
Proof.
  intros A f l. induction l as [|x l IH]; intros H; simpl; [lra|].
  pose proof (H x (or_introl eq_refl)). assert (0 <= lsum (map f l)) by (apply IH; intros; apply H; right; assumption).
  lra.
Qed.

(** ** One chunk *)
Theorem chunk_entry_error : forall (qs : list quad) (t : dtree) s eps,
  Permutation (dpairs t) (map xv qs) -> INR (length qs + s) * u <= / 2 -> 0 <= eps ->
  (forall q, In q qs -> quad_ok s eps q) ->
  Rabs (dfl t - lsum (map xw qs))
    <= gamma (length qs + s) * lsum (map xa qs) + 2 * eps * lsum (map ax qs) + INR (length qs) * eta.
Proof.
  intros qs t s eps Hp Hr He Hq.
  set (r := length qs) in *.
  pose proof u_pos. pose proof eta_pos.
  assert (Hr' : INR r * u <= / 2).
  { apply Rle_trans with (INR (r + s) * u); [|exact Hr]. apply Rmult_le_compat_r; [lra|]. apply le_INR; lia. }
  assert (Hs' : INR s * u <= / 2).
  { apply Rle_trans with (INR (r + s) * u); [|exact Hr]. apply Rmult_le_compat_r; [lra|]. apply le_INR; lia. }
  assert (Hlen : length (map xv qs) = r) by apply map_length.
  pose proof (dot_any_order (map xv qs) t Hp ltac:(rewrite Hlen; exact Hr')) as Hdt. rewrite Hlen in Hdt.
  pose proof (gamma_nonneg r ltac:(lra)) as G0. pose proof (gamma_nonneg s ltac:(lra)) as Gs0.
  pose proof (gamma_le_2ku r Hr') as G1. assert (G2 : gamma r <= 1) by lra.
  pose proof (gamma_add r s ltac:(lra)) as Gadd.
  set (A := lsum (map xa qs)). set (X := lsum (map ax qs)).
  assert (HA0 : 0 <= A).
  { unfold A. apply lsum_nonneg_in. intros [[[x v] w] a] Hin. specialize (Hq _ Hin). simpl in Hq |- *.
    pose proof (Rabs_pos w). pose proof (Rabs_pos x). apply Rmult_le_pos; lra. }
  assert (HX0 : 0 <= X) by (unfold X; apply lsum_nonneg_map; intros [[[x v] w] a]; apply Rabs_pos).
  assert (Edot : dot (map xv qs) = lsum (map xvv qs)).
  { unfold dot. rewrite map_map. f_equal. apply map_ext. intros [[[x v] w] a]. reflexivity. }
  assert (Eabs : absdot (map xv qs) = lsum (map axv qs)).
  { unfold absdot. rewrite map_map. f_equal. apply map_ext. intros [[[x v] w] a]. reflexivity. }
  assert (HD : Rabs (dot (map xv qs) - lsum (map xw qs)) <= gamma s * A + eps * X).
  { rewrite Edot.
    replace (lsum (map xvv qs) - lsum (map xw qs))
      with (lsum (map (fun q : quad => xvv q + (-1) * xw q) qs))
      by (rewrite lsum_plus_map, lsum_scale_map; ring).
    eapply Rle_trans; [apply lsum_abs_map|].
    eapply Rle_trans.
    - apply lsum_le_map with (g := fun q => gamma s * xa q + eps * ax q).
      intros [[[x v] w] a] Hin. specialize (Hq _ Hin). simpl in Hq |- *. destruct Hq as [Hv Hw].
      replace (x * v + -1 * (x * w)) with (x * (v - w)) by ring. rewrite Rabs_mult.
      pose proof (Rabs_pos x).
      assert (Rabs x * Rabs (v - w) <= Rabs x * (gamma s * a + eps)) by (apply Rmult_le_compat_l; lra).
      lra.
    - rewrite lsum_plus_map, !lsum_scale_map. fold A X. lra. }
  assert (HB : absdot (map xv qs) <= (1 + gamma s) * A + eps * X).
  { rewrite Eabs. eapply Rle_trans.
    - apply lsum_le_map with (g := fun q => (1 + gamma s) * xa q + eps * ax q).
      intros [[[x v] w] a] Hin. specialize (Hq _ Hin). simpl in Hq |- *. destruct Hq as [Hv Hw].
      assert (Rabs v <= Rabs w + Rabs (v - w)).
      { replace v with (w + (v - w)) at 1 by ring. apply Rabs_triang. }
      pose proof (Rabs_pos x).
      assert (Rabs x * Rabs v <= Rabs x * ((1 + gamma s) * a + eps)) by (apply Rmult_le_compat_l; lra).
      lra.
    - rewrite lsum_plus_map, !lsum_scale_map. fold A X. lra. }
  assert (Htri : Rabs (dfl t - lsum (map xw qs))
                 <= Rabs (dfl t - dot (map xv qs)) + Rabs (dot (map xv qs) - lsum (map xw qs))).
  { replace (dfl t - lsum (map xw qs))
      with ((dfl t - dot (map xv qs)) + (dot (map xv qs) - lsum (map xw qs))) by ring.
    apply Rabs_triang. }
  assert (gamma r * absdot (map xv qs) <= gamma r * ((1 + gamma s) * A + eps * X))
    by (apply Rmult_le_compat_l; lra).
  assert (gamma r * (eps * X) <= eps * X)
    by (rewrite <- (Rmult_1_l (eps * X)) at 2; apply Rmult_le_compat_r; [apply Rmult_le_pos|]; lra).
  assert ((gamma r + gamma s + gamma r * gamma s) * A <= gamma (r + s) * A)
    by (apply Rmult_le_compat_r; lra).
  lra.
Qed.

(** ** The chunks and the subtraction chain *)
Definition chunk := (list quad * dtree)%type.

Fixpoint resid (g : R) (cs : list chunk) : R :=
  match cs with
  | [] => g
  | c :: rest => resid (fl (g - dfl (snd c))) rest
  end.

(** [sum_c |R_c|] over the intermediate (and final) residuals. *)
Fixpoint inter_abs (g : R) (cs : list chunk) : R :=
  match cs with
  | [] => 0
  | c :: rest => Rabs (fl (g - dfl (snd c))) + inter_abs (fl (g - dfl (snd c))) rest
  end.

Definition all_quads (cs : list chunk) : list quad := flat_map fst cs.

Lemma lsum_flat_map : forall (f : quad -> R) cs,
  lsum (map f (all_quads cs)) = lsum (map (fun c => lsum (map f (fst c))) cs).
Proof.
  intros f cs. induction cs as [|c cs IH]; simpl; [reflexivity|].
  unfold all_quads in *. simpl. rewrite map_app, lsum_app, IH. reflexivity.
Qed.

(** The chunked residual entry: for a float [g], chunks of [<= b] terms
    (each [p_c] any classical evaluation of its chunk),
    [|(g - sum x w) - R_q| <= 2u sum_c |R_c| + gamma_(b+s) sum |x| a + 2 eps sum |x| + m eta]. *)
Theorem chunked_residual_entry : forall (cs : list chunk) g b s eps,
  format g -> INR (b + s) * u <= / 2 -> 0 <= eps ->
  (forall c, In c cs -> (length (fst c) <= b)%nat /\ Permutation (dpairs (snd c)) (map xv (fst c)) /\
                        forall q, In q (fst c) -> quad_ok s eps q) ->
  Rabs ((g - lsum (map xw (all_quads cs))) - resid g cs)
    <= 2 * u * inter_abs g cs + gamma (b + s) * lsum (map xa (all_quads cs))
       + 2 * eps * lsum (map ax (all_quads cs)) + INR (length (all_quads cs)) * eta.
Proof.
  induction cs as [|[qs t] cs IH]; intros g b s eps Hg Hb He Hc.
  - simpl. unfold all_quads. simpl. rewrite Rminus_0_r, Rminus_eq_0, Rabs_R0.
    simpl. pose proof u_pos. lra.
  - destruct (Hc (qs, t) (or_introl eq_refl)) as (Hlen & Hp & Hq). simpl fst in *. simpl snd in *.
    set (r1 := fl (g - dfl t)).
    assert (Hr1 : format r1) by apply fl_format.
    specialize (IH r1 b s eps Hr1 Hb He (fun c Hin => Hc c (or_intror Hin))).
    assert (Hbs : INR (length qs + s) * u <= / 2).
    { apply Rle_trans with (INR (b + s) * u); [|exact Hb]. apply Rmult_le_compat_r; [left; apply u_pos|].
      apply le_INR; lia. }
    pose proof (chunk_entry_error qs t s eps Hp Hbs He Hq) as Hch.
    pose proof (fl_sub_error_computed g (dfl t) Hg (dfl_format t)) as Hsub. fold r1 in Hsub.
    assert (Hgm : gamma (length qs + s) <= gamma (b + s)).
    { apply gamma_mono; [lia|]. pose proof u_pos. lra. }
    assert (HA : 0 <= lsum (map xa qs)).
    { apply lsum_nonneg_in. intros [[[x v] w] a] Hin. specialize (Hq _ Hin). simpl in Hq |- *.
      pose proof (Rabs_pos w). pose proof (Rabs_pos x). apply Rmult_le_pos; lra. }
    unfold all_quads in *. simpl flat_map. rewrite !map_app, !lsum_app, app_length, plus_INR.
    simpl resid. simpl inter_abs. fold r1.
    assert (Hsplit : (g - (lsum (map xw qs) + lsum (map xw (flat_map fst cs)))) - resid r1 cs
                     = ((r1 - lsum (map xw (flat_map fst cs))) - resid r1 cs)
                       + ((g - dfl t) - r1) + (dfl t - lsum (map xw qs))) by ring.
    rewrite Hsplit.
    eapply Rle_trans; [apply Rabs_triang|]. eapply Rle_trans; [apply Rplus_le_compat_r, Rabs_triang|].
    assert (gamma (length qs + s) * lsum (map xa qs) <= gamma (b + s) * lsum (map xa qs))
      by (apply Rmult_le_compat_r; assumption).
    lra.
Qed.

(** ** The middle factor's entries *)

(** Lemmas 3.2/3.4: [v = fl(s y)], [w = s y], [a = |s||y|]: [quad_ok 1 (eta/2)]. *)
Lemma v_entry_product : forall x sl yl,
  quad_ok 1 (eta / 2) (x, fl (sl * yl), sl * yl, Rabs sl * Rabs yl).
Proof.
  intros x sl yl. simpl. split.
  - eapply Rle_trans; [apply fl_error_abs|]. rewrite Rabs_mult.
    pose proof u_le_gamma1. pose proof (Rabs_pos sl). pose proof (Rabs_pos yl).
    assert (u * (Rabs sl * Rabs yl) <= gamma 1 * (Rabs sl * Rabs yl)) by (apply Rmult_le_compat_r; nra).
    lra.
  - rewrite Rabs_mult. lra.
Qed.

(** Lemma 3.4-T: [v] any classical evaluation of a dot product of at most
    3 pairs ([y_il = fl(fl(fl(q d) + fl(q e)) + fl(q e))]), [w] its exact
    value, [a] its absolute value: [quad_ok 3 (3 eta)]. *)
Lemma v_entry_dot : forall x (ps : list (R * R)) (tv : dtree),
  Permutation (dpairs tv) ps -> (length ps <= 3)%nat ->
  quad_ok 3 (3 * eta) (x, dfl tv, dot ps, absdot ps).
Proof.
  intros x ps tv Hp Hl. simpl. pose proof u_pos. pose proof eta_pos.
  assert (H3 : INR 3 * u <= / 2) by (pose proof u_small; simpl in *; lra).
  assert (Hk : INR (length ps) * u <= / 2).
  { apply Rle_trans with (INR 3 * u); [|exact H3]. apply Rmult_le_compat_r; [lra|]. apply le_INR; lia. }
  pose proof (dot_any_order ps tv Hp Hk) as Hdt. split.
  - eapply Rle_trans; [exact Hdt|].
    assert (Ha : 0 <= absdot ps).
    { unfold absdot. apply lsum_nonneg_map. intros; apply Rmult_le_pos; apply Rabs_pos. }
    assert (gamma (length ps) <= gamma 3) by (apply gamma_mono; [exact Hl|lra]).
    assert (INR (length ps) <= 3) by (replace 3 with (INR 3) by (simpl; lra); apply le_INR; exact Hl).
    apply Rplus_le_compat; [apply Rmult_le_compat_r; assumption|]. apply Rmult_le_compat_r; lra.
  - unfold dot, absdot. eapply Rle_trans; [apply lsum_abs_map|].
    right. f_equal. apply map_ext. intros; apply Rabs_mult.
Qed.

(** Lemma 3.4-T's constants: with [m] terms in all and [X = sum_l |q_il| <= maxrow],
    [m + 6 X <= 2m + 12 maxrow] (the prose's [kappa_T]) [<= 4m + 4 maxrow3 + 4]
    (the code's, [maxrow3 >= 3 maxrow]). *)
Lemma lemma_3_4t_constant : forall m X maxrow maxrow3, 0 <= m -> 0 <= X -> X <= maxrow -> 3 * maxrow <= maxrow3 ->
  m + 2 * (3 * X) <= 2 * m + 12 * maxrow /\ 2 * m + 12 * maxrow <= 4 * m + 4 * maxrow3 + 4.
Proof. intros. split; lra. Qed.

(** [fperror._sumsq_sym]: a block's sum of squares of the symmetric
    completion is [fl(fl(sum_diag r^2) + 2 fl(sum_above r^2))]; as
    [fl(2 t) = fl(t + t)], this is ONE classical evaluation (a [dtree]) of
    the squares of the diagonal block and of the strictly-upper entries
    twice (each once for itself and once for its mirror), so Lemma 2.2
    ([DotProduct.v], any tree of nonnegative terms) bounds the completion's
    [||R_tilde_c||_F^2] from it (Lemma 3.4 (i)). *)
Theorem sumsq_sym_one_tree : forall td toff : dtree,
  fl (dfl td + fl (2 * dfl toff)) = dfl (DAdd td (DAdd toff toff)) /\
  dpairs (DAdd td (DAdd toff toff)) = dpairs td ++ dpairs toff ++ dpairs toff.
Proof.
  intros td toff. split; [|reflexivity].
  simpl. replace (dfl toff + dfl toff) with (2 * dfl toff) by ring. reflexivity.
Qed.

(** Lemma 11.2's [beta]: the prose's bound ([NormBounds.lemma_11_2_beta] with
    [gam = gamma_d], [kap = 2 d eta]) is at most the code's
    [gamma_(2d) N + nL^2 g + under] for any [under >= 2 d^2 eta (1 + 2 nL)]
    ([gamma_d (2 + gamma_d) <= gamma_(2d)], [1 + gamma_d <= 2]). *)
Lemma lemma_11_2_beta_constants : forall d N g nL under,
  INR (d + d) * u <= / 2 -> 0 <= N -> 0 <= g -> 0 <= nL ->
  2 * INR d * eta * INR d * (1 + 2 * nL) <= under ->
  gamma d * (2 + gamma d) * N + nL * g * nL + 2 * INR d * eta * INR d * (1 + (1 + gamma d) * nL)
    <= gamma (d + d) * N + nL * nL * g + under.
Proof.
  intros d N g nL under Hd HN Hg HnL Hu.
  pose proof u_pos. pose proof eta_pos. pose proof (pos_INR d).
  assert (Hd1 : INR d * u <= / 2).
  { apply Rle_trans with (INR (d + d) * u); [|exact Hd]. apply Rmult_le_compat_r; [lra|]. apply le_INR; lia. }
  pose proof (gamma_add d d ltac:(lra)) as Ga. pose proof (gamma_nonneg d ltac:(lra)) as G0.
  pose proof (gamma_le_2ku d Hd1) as G1.
  assert (Hd2 : INR d * u <= / 4) by (rewrite plus_INR in Hd; lra).
  assert (G2 : gamma d <= 1) by lra.
  assert (E1 : gamma d * (2 + gamma d) * N <= gamma (d + d) * N) by (apply Rmult_le_compat_r; [exact HN|nra]).
  assert (E2 : 2 * INR d * eta * INR d * (1 + (1 + gamma d) * nL) <= 2 * INR d * eta * INR d * (1 + 2 * nL)).
  { apply Rmult_le_compat_l; [apply Rmult_le_pos; [apply Rmult_le_pos; [apply Rmult_le_pos|]|]; lra|].
    assert ((1 + gamma d) * nL <= 2 * nL) by (apply Rmult_le_compat_r; lra). lra. }
  nra.
Qed.
