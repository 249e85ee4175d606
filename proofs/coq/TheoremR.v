(** * Theorem R's scalar step (the a-posteriori enclosure)

    Backs [proofs/enclosure.md] §1 (Theorem R, and the monotone tightening
    of [svd._build]); code: [certbound/enclose/svd.py]
    ([theorem_r_intervals], [_build]).  The same scalar step is used by
    Lemma P ([product.enclose_singular_values_of_product]).

    The matrix facts are not formalised here; they enter as explicitly named
    hypotheses of the section (so they are premises of the theorem, not
    axioms), each citing its source ([enclosure.md] §9):
    - [weyl_singular] (F1, Weyl for singular values; Horn & Johnson, Topics
      in Matrix Analysis, 1991, Thm 3.3.16(c)):
      [|sigma_i(W) - sigma_i(Wt)| <= ||W - Wt||_2];
    - [weyl_eig_X], [weyl_eig_Y] (F2, Weyl for symmetric matrices; Horn &
      Johnson, Matrix Analysis, 2013, Thm 4.3.1): the eigenvalues
      [sigma_j(X)^2] of [X^T X = I + (X^T X - I)] lie in
      [[1 - ||X^T X - I||, 1 + ||X^T X - I||]] (used for the largest and the
      smallest one);
    - [product_bounds] (F3 and §1(b), Ostrowski-type multiplicative bounds;
      Horn & Johnson 1991, Thm 3.3.16(d); Eisenstat & Ipsen, SIAM J. Numer.
      Anal. 32 (1995), Thm 3.3): for [Wt = X diag(s) Y^T] with [X], [Y^T]
      of full rank [k], [sigma_k(X) sigma_k(Y) s_(i) <= sigma_i(Wt) <=
      ||X|| ||Y|| s_(i)]. *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core.
Open Scope R_scope.

Section TheoremR.
(** [sW i], [sWt i]: the [i]-th singular values of [W] and of
    [Wt = X diag(s) Y^T]; [s i]: the [i]-th largest [|s_j|]; [nX = ||X||_2],
    [mX = sigma_k(X)], likewise for [Y]; [dX = ||X^T X - I||_2],
    [dY = ||Y^T Y - I||_2], [dW = ||W - Wt||_2]. *)
Variables (sW sWt s : nat -> R) (nX mX nY mY dX dY dW : R).
Hypothesis sW_nonneg : forall i, 0 <= sW i.
Hypothesis s_nonneg : forall i, 0 <= s i.
Hypothesis norms_nonneg : 0 <= nX /\ 0 <= mX /\ 0 <= nY /\ 0 <= mY.
Hypothesis weyl_singular : forall i, Rabs (sW i - sWt i) <= dW.
Hypothesis weyl_eig_X : nX ^ 2 <= 1 + dX /\ 1 - dX <= mX ^ 2.
Hypothesis weyl_eig_Y : nY ^ 2 <= 1 + dY /\ 1 - dY <= mY ^ 2.
Hypothesis product_bounds : forall i, mX * mY * s i <= sWt i <= nX * nY * s i.

(** The certified inputs: [alpha >= dX], [beta >= dY] (both [< 1]),
    [e >= dW] (upper ends of the Arb balls of [fperror] or [tight]). *)
Variables alpha beta e : R.
Hypothesis Halpha : dX <= alpha < 1.
Hypothesis Hbeta : dY <= beta < 1.
Hypothesis He : dW <= e.

Lemma sqrt_le_of_sq : forall a b, 0 <= a -> 0 <= b -> a ^ 2 <= b -> a <= sqrt b.
Proof.
  intros a b Ha Hb H. rewrite <- (sqrt_pow2 a Ha). apply sqrt_le_1_alt. exact H.
Qed.

Lemma sq_le_of_sqrt : forall a b, 0 <= a -> 0 <= b -> b <= a ^ 2 -> sqrt b <= a.
Proof.
  intros a b Ha Hb H. rewrite <- (sqrt_pow2 a Ha). apply sqrt_le_1_alt. exact H.
Qed.

(** Theorem R: [max(0, s_(i) sqrt((1-alpha)(1-beta)) - e) <= sigma_i(W)
    <= s_(i) sqrt((1+alpha)(1+beta)) + e]. *)
Theorem theorem_r : forall i,
  Rmax 0 (s i * sqrt ((1 - alpha) * (1 - beta)) - e) <= sW i /\
  sW i <= s i * sqrt ((1 + alpha) * (1 + beta)) + e.
Proof.
  intros i. destruct norms_nonneg as (HnX & HmX & HnY & HmY).
  destruct weyl_eig_X as [HX1 HX2]. destruct weyl_eig_Y as [HY1 HY2].
  pose proof (s_nonneg i). pose proof (weyl_singular i) as Hw. apply Rabs_le_inv in Hw.
  destruct (product_bounds i) as [Hlo Hhi].
  pose proof (pow2_ge_0 nX). pose proof (pow2_ge_0 nY).
  assert (HnX' : nX <= sqrt (1 + alpha)) by (apply sqrt_le_of_sq; lra).
  assert (HnY' : nY <= sqrt (1 + beta)) by (apply sqrt_le_of_sq; lra).
  assert (HmX' : sqrt (1 - alpha) <= mX) by (apply sq_le_of_sqrt; lra).
  assert (HmY' : sqrt (1 - beta) <= mY) by (apply sq_le_of_sqrt; lra).
  rewrite !sqrt_mult by lra.
  pose proof (sqrt_pos (1 - alpha)). pose proof (sqrt_pos (1 - beta)).
  split.
  - apply Rmax_lub; [apply sW_nonneg|].
    assert (sqrt (1 - alpha) * sqrt (1 - beta) <= mX * mY) by (apply Rmult_le_compat; lra).
    assert (s i * (sqrt (1 - alpha) * sqrt (1 - beta)) <= s i * (mX * mY)) by (apply Rmult_le_compat_l; lra).
    lra.
  - assert (nX * nY <= sqrt (1 + alpha) * sqrt (1 + beta)) by (apply Rmult_le_compat; lra).
    assert (s i * (nX * nY) <= s i * (sqrt (1 + alpha) * sqrt (1 + beta))) by (apply Rmult_le_compat_l; lra).
    lra.
Qed.
End TheoremR.

(** Monotone tightening ([svd._build]): for nonincreasing singular values, a
    lower bound of [sigma_j] bounds every [sigma_i], [i <= j], from below and
    an upper bound of [sigma_i] bounds every [sigma_j], [j >= i], from above;
    so running maxima of lower ends and running minima of upper ends remain
    valid. *)
Theorem monotone_tightening :
  forall (sigma lo hi : nat -> R),
  (forall i j, (i <= j)%nat -> sigma j <= sigma i) ->
  (forall i, lo i <= sigma i <= hi i) ->
  forall i j, (i <= j)%nat -> lo j <= sigma i /\ sigma j <= hi i.
Proof.
  intros sigma lo hi Hmono Hb i j Hij. pose proof (Hmono i j Hij).
  pose proof (Hb i). pose proof (Hb j). lra.
Qed.
