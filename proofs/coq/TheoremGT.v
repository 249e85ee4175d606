(** * Theorem G-T: a tridiagonal [T] and eigenvalue brackets instead of eigenvectors

    Backs [proofs/enclosure-gram.md] §1a (Theorem G-T and its float
    evaluation); code: [certbound/enclose/gram.py]
    ([tridiagonal_theorem_g_float_bounds], which calls [_outward_squares]
    on the lower brackets [a_i] for the lower ends and on the upper
    brackets [b_i] for the upper ends, then [_balls_from_squares]: the same
    square roots and [ldexp] back as [theorem_g_float_bounds]).  At the end,
    [proofs/enclosure.md] §11 Lemma 11.2 (Theorem G for a product) and its
    float ends ([product._certify_stack_theorem_g]).

    As in [TheoremG.v], the matrix facts are named section hypotheses:
    - [weyl_eig_Q] (F2): the extreme eigenvalues of [Q^T Q] lie in
      [[1 - ||Q^T Q - I||, 1 + ||Q^T Q - I||]];
    - [ostrowski_t] (Lemma G.0 with [S = Q], [A = T], any real symmetric
      [T]): [lambda_i(Q T Q^T) = theta_i lambda_i(T)] with
      [theta_i] between the extreme eigenvalues of [Q^T Q];
    - [weyl_additive] (F2 and the triangle inequality);
    - [t_bracketed]: [a_i <= lambda_i(T) <= b_i] (Lemma S / Corollary S:
      [SturmFloat.v], with the scaling of [T] as in
      [tridiagonal_eigenvalue_bounds]). *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core.
From Certbound Require Import FPModel OneStep TheoremG TheoremGFloat TheoremRFloat.
Open Scope R_scope.

Section TheoremGT.
(** [lG i = sigma_i(W)^2], [lH i = lambda_i(Q T Q^T)], [lT i = lambda_i(T)],
    [la i <= lT i <= lb i]; [dU = ||Q^T Q - I||], [dB = ||G^ - W W^T||],
    [dE = ||G^ - Q T Q^T||]. *)
Variables (sW lG lH lT la lb : nat -> R) (mu_min mu_max dU dB dE : R).
Hypothesis sW_nonneg : forall i, 0 <= sW i.
Hypothesis lG_sq : forall i, lG i = sW i ^ 2.
Hypothesis weyl_eig_Q : 1 - dU <= mu_min /\ mu_min <= mu_max /\ mu_max <= 1 + dU.
Hypothesis ostrowski_t : forall i, exists th, mu_min <= th <= mu_max /\ lH i = th * lT i.
Hypothesis t_bracketed : forall i, la i <= lT i <= lb i.
Hypothesis weyl_additive : forall i, Rabs (lG i - lH i) <= dE + dB.

Variables alpha beta e : R.
Hypothesis Halpha : dU <= alpha < 1.
Hypothesis Hbeta : dB <= beta.
Hypothesis He : dE <= e.

(** Theorem G-T: [min_theta theta a_i - c <= sigma_i(W)^2 <= max_theta theta b_i + c]
    ([theta] over [[1-alpha, 1+alpha]], [c = beta + e]); the extreme [theta]
    is [theta_lo]/[theta_hi] of [TheoremG.v] (sign cases). *)
Theorem theorem_gt : forall i,
  theta_lo alpha (la i) * la i - (beta + e) <= sW i ^ 2 <= theta_hi alpha (lb i) * lb i + (beta + e) /\
  sqrt (Rmax (theta_lo alpha (la i) * la i - (beta + e)) 0) <= sW i
    <= sqrt (theta_hi alpha (lb i) * lb i + (beta + e)).
Proof.
  intros i. destruct weyl_eig_Q as (H1 & H2 & H3).
  destruct (ostrowski_t i) as (th & Hth & EH). destruct (t_bracketed i) as [Ha Hb].
  pose proof (weyl_additive i) as Hw. apply Rabs_le_inv in Hw. rewrite lG_sq in Hw.
  assert (Hth0 : 0 < th) by lra.
  assert (HL : theta_lo alpha (la i) * la i <= lH i).
  { rewrite EH. apply Rle_trans with (th * la i); [|apply Rmult_le_compat_l; lra].
    unfold theta_lo. destruct (Rle_dec 0 (la i)).
    - apply Rmult_le_compat_r; lra.
    - assert (0 <= (1 + alpha - th) * (- la i)) by (apply Rmult_le_pos; lra). nra. }
  assert (HU : lH i <= theta_hi alpha (lb i) * lb i).
  { rewrite EH. apply Rle_trans with (th * lb i); [apply Rmult_le_compat_l; lra|].
    unfold theta_hi. destruct (Rle_dec 0 (lb i)).
    - apply Rmult_le_compat_r; lra.
    - assert (0 <= (th - (1 - alpha)) * (- lb i)) by (apply Rmult_le_pos; lra). nra. }
  assert (Hsq : theta_lo alpha (la i) * la i - (beta + e) <= sW i ^ 2
                <= theta_hi alpha (lb i) * lb i + (beta + e)) by lra.
  split; [exact Hsq|]. exact (sqrt_ends _ _ _ (sW_nonneg i) Hsq).
Qed.

(** The float evaluation: [TheoremGFloat.v]'s ends with [lambda := a_i] for
    the lower end and [lambda := b_i] for the upper end, for floats
    [c >= beta + e], [grow >= 1 + alpha], [0 <= shrink <= 1 - alpha]. *)
Variables c grow shrink : R.
Hypothesis c_ok : beta + e <= c.
Hypothesis grow_ok : 1 + alpha <= grow.
Hypothesis shrink_ok : 0 <= shrink <= 1 - alpha.

Theorem theorem_gt_float : forall i,
  g_lower_end la c grow shrink i <= sW i <= g_upper_end lb c grow shrink i.
Proof.
  intros i. destruct (theorem_gt i) as [_ [HG1 HG2]].
  destruct (g_squares_bracket la alpha beta e c grow shrink c_ok grow_ok shrink_ok i) as [H1 _].
  destruct (g_squares_bracket lb alpha beta e c grow shrink c_ok grow_ok shrink_ok i) as [_ H2].
  split.
  - unfold g_lower_end. destruct (Rlt_dec 0 (lsq la c grow shrink i)) as [Hp|_]; [|apply sW_nonneg].
    apply Rle_trans with (2 := HG1). apply down_sqrt.
    apply Rle_trans with (theta_lo alpha (la i) * la i - (beta + e)); [exact H1 | apply Rmax_l].
  - apply Rle_trans with (1 := HG2). unfold g_upper_end.
    destruct (Req_EM_T (hsq lb c grow shrink i) 0) as [E|_].
    + rewrite E in H2. rewrite sqrt_neg_0 by lra. lra.
    + apply up_sqrt. exact H2.
Qed.

(** Scaling back with the code's tests ([_balls_from_squares], as in
    [TheoremGFloat.theorem_g_float_scaled]). *)
Theorem theorem_gt_float_scaled : forall i t,
  (g_lower_end la c grow shrink i = 0 \/
     bpow radix2 (-1022) < fl (g_lower_end la c grow shrink i * bpow radix2 t)) ->
  (g_upper_end lb c grow shrink i = 0 \/
     bpow radix2 (-1022) <= fl (g_upper_end lb c grow shrink i * bpow radix2 t)) ->
  fl (g_lower_end la c grow shrink i * bpow radix2 t) <= sW i * bpow radix2 t
    <= fl (g_upper_end lb c grow shrink i * bpow radix2 t).
Proof.
  intros i t Hlo Hhi. pose proof (theorem_gt_float i) as [H1 H2].
  pose proof (bpow_gt_0 radix2 t) as Ht. split.
  - destruct Hlo as [E|Hlo].
    + rewrite E, Rmult_0_l, fl_0. apply Rmult_le_pos; [apply sW_nonneg | lra].
    + assert (Hx : 0 <= g_lower_end la c grow shrink i).
      { destruct (Rle_lt_dec 0 (g_lower_end la c grow shrink i)) as [H|H]; [exact H|]. exfalso.
        assert (fl (g_lower_end la c grow shrink i * bpow radix2 t) <= 0);
          [|pose proof (bpow_gt_0 radix2 (-1022)); lra].
        rewrite <- fl_0. apply fl_le.
        assert (0 < - g_lower_end la c grow shrink i * bpow radix2 t) by (apply Rmult_lt_0_compat; lra).
        lra. }
      rewrite ldexp_lower_exact; [| apply g_lower_end_format | exact Hx | exact Hlo].
      apply Rmult_le_compat_r; lra.
  - apply Rle_trans with (g_upper_end lb c grow shrink i * bpow radix2 t); [apply Rmult_le_compat_r; lra|].
    destruct Hhi as [E|Hhi].
    + rewrite E, Rmult_0_l, fl_0. lra.
    + apply ldexp_upper_sound; [apply g_upper_end_format | exact Hhi].
Qed.

End TheoremGT.

(** ** Lemma 11.2 (Theorem G for a product, [product._certify_stack_theorem_g])

    [sP i = sigma_i(A B^T)], [lM i = lambda_i(L^T G_A L)] ([>= 0]: a Gram
    matrix), [lH i = lambda_i(U diag(lambda) U^T)]; named hypotheses: Theorem
    G's ([weyl_eig_U], [ostrowski], [weyl_additive] for [M_hat] against
    [L^T G_A L]) and the congruence steps (a)-(c) of the proof
    ([congruence]: [|sigma_i(A B^T)^2 - lambda_i(L^T G_A L)| <= ||G_A|| ||G_B - L L^T||]). *)
Section Lemma112.
Variables (sP lM lH lam : nat -> R) (mu_min mu_max dU dB dE dEps : R).
Hypothesis sP_nonneg : forall i, 0 <= sP i.
Hypothesis lM_nonneg : forall i, 0 <= lM i.
Hypothesis weyl_eig_U : 1 - dU <= mu_min /\ mu_min <= mu_max /\ mu_max <= 1 + dU.
Hypothesis ostrowski : forall i,
  (0 <= lam i -> mu_min * lam i <= lH i <= mu_max * lam i) /\
  (lam i < 0 -> mu_max * lam i <= lH i <= mu_min * lam i).
Hypothesis weyl_additive : forall i, Rabs (lM i - lH i) <= dE + dB.
Hypothesis congruence : forall i, Rabs (sP i ^ 2 - lM i) <= dEps.

Variables alpha beta e eps : R.
Hypothesis Halpha : dU <= alpha < 1.
Hypothesis Hbeta : dB <= beta.
Hypothesis He : dE <= e.
Hypothesis Heps : dEps <= eps.

Theorem lemma_11_2 : forall i,
  theta_lo alpha (lam i) * lam i - (beta + eps + e) <= sP i ^ 2
    <= theta_hi alpha (lam i) * lam i + (beta + eps + e).
Proof.
  intros i.
  assert (HG := theorem_g (fun i => sqrt (lM i)) lM lH lam mu_min mu_max dU dB dE
                  (fun i => sqrt_pos (lM i))
                  (fun i => eq_sym (pow2_sqrt (lM i) (lM_nonneg i)))
                  weyl_eig_U ostrowski weyl_additive alpha beta e Halpha Hbeta He i).
  destruct HG as [[H1 H2] _]. rewrite pow2_sqrt in H1, H2 by apply lM_nonneg.
  pose proof (congruence i) as Hc. apply Rabs_le_inv in Hc. lra.
Qed.

(** The float ends: [TheoremGFloat.v]'s with [c >= beta + e + eps]
    ([c = up(up(beta + e) + eps)] in the code). *)
Variables c grow shrink : R.
Hypothesis c_ok : beta + e + eps <= c.
Hypothesis grow_ok : 1 + alpha <= grow.
Hypothesis shrink_ok : 0 <= shrink <= 1 - alpha.

Theorem lemma_11_2_float : forall i,
  g_lower_end lam c grow shrink i <= sP i <= g_upper_end lam c grow shrink i.
Proof.
  intros i. pose proof (lemma_11_2 i) as [HL HU].
  assert (Hc' : (beta + eps) + e <= c) by lra.
  destruct (g_squares_bracket lam alpha (beta + eps) e c grow shrink Hc' grow_ok shrink_ok i) as [H1 H2].
  pose proof (sP_nonneg i) as H0.
  split.
  - unfold g_lower_end. destruct (Rlt_dec 0 (lsq lam c grow shrink i)) as [Hp|_]; [|exact H0].
    rewrite <- (sqrt_pow2 (sP i) H0). apply down_sqrt. lra.
  - unfold g_upper_end. destruct (Req_EM_T (hsq lam c grow shrink i) 0) as [E|_].
    + rewrite E in H2. assert (sP i ^ 2 <= 0) by lra. nra.
    + rewrite <- (sqrt_pow2 (sP i) H0). apply up_sqrt. lra.
Qed.

End Lemma112.
