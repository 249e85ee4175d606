(** * Lemma 8.1's [c0] evaluated in floats

    Backs [proofs/enclosure.md] §8 (Lemma 8.1, *Evaluation*: "[c0 = eta K]
    ... is bounded per product in floats ([_lemma81_c0_upper]) ... every
    operation on the nonnegative operands is followed by one step up (Lemma
    10.1, §10; it needs no normality, so subnormal [beta] and the final
    product by [eta = 2^-1074] are covered)"); code:
    [certbound/enclose/quantities.py] ([_lemma81_c0_upper], with the floats
    [g1 >= 1 + gamma_d], [g2 >= (1 + gamma_d)^2] of [_lemma81_constants]).
    The bound is exactly [Lemma81.v]'s [c0].

    The code's operation sequence ([_up(x) = nextafter(x, +inf)] after each
    numpy operation, [OneStep.v]):
    [db = up(d * beta)],
    [K = up(up(up(up(up(db * db) * 2m) * g2) + up(up(beta * 2dd) * g1)) + 2d)],
    [c0f = up(K * eta)], where [2.0 * m], [2.0 * d * d], [2.0 * d] and
    [d] are Python floats ([m2], [dd2], [d2], [df]: exact for the shapes
    used; only [>=] is needed).  An overflow gives [+inf] (or [nan]) and the
    product takes the formed path. *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core.
From Certbound Require Import FPModel OneStep.
Open Scope R_scope.

Local Notation up y := (succ radix2 fexp (fl y)).

Definition c0_float (m2 dd2 d2 df g1 g2 beta : R) : R :=
  let db := up (df * beta) in
  let A := up (up (up (db * db) * m2) * g2) in
  let B := up (up (beta * dd2) * g1) in
  let K := up (up (A + B) + d2) in
  up (K * eta).

Theorem lemma81_c0_float : forall (m d gd beta m2 dd2 d2 df g1 g2 : R),
  0 <= m -> 0 <= d -> 0 <= gd -> 0 <= beta ->
  2 * m <= m2 -> 2 * d ^ 2 <= dd2 -> 2 * d <= d2 -> d <= df ->
  1 + gd <= g1 -> (1 + gd) ^ 2 <= g2 ->
  2 * m * eta * (d * beta) ^ 2 * (1 + gd) ^ 2 + 2 * d ^ 2 * beta * eta * (1 + gd) + 2 * d * eta
    <= c0_float m2 dd2 d2 df g1 g2 beta.
Proof.
  intros m d gd beta m2 dd2 d2 df g1 g2 Hm Hd Hg Hb Hm2 Hdd2 Hd2 Hdf Hg1 Hg2.
  pose proof eta_pos as He. unfold c0_float.
  assert (Hdb : 0 <= d * beta <= up (df * beta)) by (split; [nra | apply up_mul; lra]).
  assert (Hsq : 0 <= (d * beta) * (d * beta) <= up (up (df * beta) * up (df * beta))) by (split; [nra | apply up_mul; lra]).
  assert (HA1 : 0 <= (d * beta) * (d * beta) * (2 * m) <= up (up (up (df * beta) * up (df * beta)) * m2))
    by (split; [nra | apply up_mul; lra]).
  assert (HA : 0 <= (d * beta) * (d * beta) * (2 * m) * (1 + gd) ^ 2
               <= up (up (up (up (df * beta) * up (df * beta)) * m2) * g2)).
  { split; [apply Rmult_le_pos; [lra | apply pow2_ge_0] | apply up_mul; [lra | split; [apply pow2_ge_0 | lra]]]. }
  assert (HB1 : 0 <= beta * (2 * d ^ 2) <= up (beta * dd2)).
  { split; [apply Rmult_le_pos; [lra | nra] | apply up_mul; [lra | split; [nra | lra]]]. }
  assert (HB : 0 <= beta * (2 * d ^ 2) * (1 + gd) <= up (up (beta * dd2) * g1)) by (split; [nra | apply up_mul; lra]).
  set (A := up (up (up (up (df * beta) * up (df * beta)) * m2) * g2)) in *.
  set (B := up (up (beta * dd2) * g1)) in *.
  assert (HAB : 0 <= (d * beta) * (d * beta) * (2 * m) * (1 + gd) ^ 2 + beta * (2 * d ^ 2) * (1 + gd) <= up (A + B))
    by (split; [lra | apply up_add; lra]).
  assert (HK : 0 <= (d * beta) * (d * beta) * (2 * m) * (1 + gd) ^ 2 + beta * (2 * d ^ 2) * (1 + gd) + 2 * d
               <= up (up (A + B) + d2)) by (split; [lra | apply up_add; lra]).
  pose proof (up_mul _ eta _ eta HK (conj (Rlt_le _ _ He) (Rle_refl eta))) as Hc.
  eapply Rle_trans; [|exact Hc]. right. ring.
Qed.
