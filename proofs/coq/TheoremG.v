(** * Theorem G's scalar step (gram mode)

    Backs [proofs/enclosure-gram.md] §1 (Theorem G); code:
    [certbound/enclose/gram.py] ([theorem_g_intervals]).  As in
    [TheoremR.v], the matrix facts are named section hypotheses citing
    their sources:
    - [weyl_eig_U] (F2, Weyl for symmetric matrices; Horn & Johnson,
      Matrix Analysis, 2013, Thm 4.3.1): the extreme eigenvalues
      [mu_min <= mu_max] of [U^T U] lie in [[1 - ||U^T U - I||, 1 + ||U^T U - I||]];
    - [ostrowski] (Lemma G.0 of [enclosure-gram.md]; Ostrowski's theorem,
      Horn & Johnson 2013, Thm 4.5.9): [lambda_i(U diag(lambda) U^T)] lies
      between [mu_min lambda_(i)] and [mu_max lambda_(i)];
    - [weyl_additive] (F2 with the triangle inequality):
      [|lambda_i(G) - lambda_i(H)| <= ||G^ - H|| + ||G - G^||]. *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Raux.
Open Scope R_scope.

(** The last step of Theorems G and G-T: ends of [s^2] give ends of [s >= 0]. *)
Lemma sqrt_ends : forall s lo hi : R, 0 <= s -> lo <= s ^ 2 <= hi -> sqrt (Rmax lo 0) <= s <= sqrt hi.
Proof.
  intros s lo hi H0 [Hlo Hhi]. split.
  - apply Rmax_case_strong; intros _.
    + rewrite <- (sqrt_pow2 s H0). apply sqrt_le_1_alt. exact Hlo.
    + rewrite sqrt_0. exact H0.
  - rewrite <- (sqrt_pow2 s H0). apply sqrt_le_1_alt. exact Hhi.
Qed.

Section TheoremG.
(** [lG i = lambda_i(W W^T) = sigma_i(W)^2], [lH i = lambda_i(U diag(lambda) U^T)],
    [lam i = lambda_(i)] (sorted, with signs); [dU = ||U^T U - I||],
    [dB = ||G^ - W W^T||], [dE = ||G^ - U diag(lambda) U^T||]. *)
Variables (sW lG lH lam : nat -> R) (mu_min mu_max dU dB dE : R).
Hypothesis sW_nonneg : forall i, 0 <= sW i.
Hypothesis lG_sq : forall i, lG i = sW i ^ 2.
Hypothesis weyl_eig_U : 1 - dU <= mu_min /\ mu_min <= mu_max /\ mu_max <= 1 + dU.
Hypothesis ostrowski : forall i,
  (0 <= lam i -> mu_min * lam i <= lH i <= mu_max * lam i) /\
  (lam i < 0 -> mu_max * lam i <= lH i <= mu_min * lam i).
Hypothesis weyl_additive : forall i, Rabs (lG i - lH i) <= dE + dB.

Variables alpha beta e : R.
Hypothesis Halpha : dU <= alpha < 1.
Hypothesis Hbeta : dB <= beta.
Hypothesis He : dE <= e.

Definition theta_lo (l : R) : R := if Rle_dec 0 l then 1 - alpha else 1 + alpha.
Definition theta_hi (l : R) : R := if Rle_dec 0 l then 1 + alpha else 1 - alpha.

(** Theorem G: [theta^- lambda_(i) - c <= sigma_i(W)^2 <= theta^+ lambda_(i) + c],
    [c = beta + e], hence [sqrt(max(l_i, 0)) <= sigma_i(W) <= sqrt(h_i)]. *)
Theorem theorem_g : forall i,
  theta_lo (lam i) * lam i - (beta + e) <= sW i ^ 2 <= theta_hi (lam i) * lam i + (beta + e) /\
  sqrt (Rmax (theta_lo (lam i) * lam i - (beta + e)) 0) <= sW i <= sqrt (theta_hi (lam i) * lam i + (beta + e)).
Proof.
  intros i. destruct weyl_eig_U as (H1 & H2 & H3). destruct (ostrowski i) as [Op On].
  pose proof (weyl_additive i) as Hw. apply Rabs_le_inv in Hw. rewrite lG_sq in Hw.
  assert (Hsq : theta_lo (lam i) * lam i - (beta + e) <= sW i ^ 2 <= theta_hi (lam i) * lam i + (beta + e)).
  { unfold theta_lo, theta_hi. destruct (Rle_dec 0 (lam i)) as [Hp|Hn].
    - specialize (Op Hp).
      assert ((1 - alpha) * lam i <= mu_min * lam i) by (apply Rmult_le_compat_r; lra).
      assert (mu_max * lam i <= (1 + alpha) * lam i) by (apply Rmult_le_compat_r; lra).
      lra.
    - assert (Hl : lam i < 0) by lra. specialize (On Hl).
      assert (0 <= (1 + alpha - mu_max) * (- lam i)) by (apply Rmult_le_pos; lra).
      assert (0 <= (mu_min - (1 - alpha)) * (- lam i)) by (apply Rmult_le_pos; lra).
      lra. }
  split; [exact Hsq|]. exact (sqrt_ends _ _ _ (sW_nonneg i) Hsq).
Qed.
End TheoremG.
