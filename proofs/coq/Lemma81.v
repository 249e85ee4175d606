(** * Lemma 8.1's error budget ([proofs/enclosure.md] §8, Lemma 8.1)

    Code: [certbound/enclose/quantities.py] ([_norm_21_of_product_gram]),
    which evaluates [c1], [c0] below in Arb.  The three entrywise bounds
    are instances of [DotProduct.dot_any_order] (with the code's [2k eta]);
    this file checks the algebra that combines them into
    [|s_j - t_j| <= c1 q_j + c0]. *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Raux.
Open Scope R_scope.

Theorem lemma_8_1_budget :
  forall (gm gd m d eta beta b1 q p T1 T2 T3 : R),
  0 <= gm -> 0 <= gd -> 0 <= m -> 0 <= d -> 0 <= eta -> 0 <= q -> 0 <= p ->
  0 <= b1 <= d * beta ->
  p <= (1 + gm) * q + 2 * m * eta * b1 ^ 2 ->
  Rabs T1 <= gm * q + 2 * m * eta * b1 ^ 2 ->
  Rabs T2 <= gd * p + 2 * d * eta * b1 ->
  Rabs T3 <= gd * (1 + gd) * p + 2 * d * gd * eta * b1 + 2 * d * eta ->
  Rabs (T1 + T2 + T3)
    <= (gm + (2 * gd + gd ^ 2) * (1 + gm)) * q
       + (2 * m * eta * (d * beta) ^ 2 * (1 + gd) ^ 2 + 2 * d ^ 2 * beta * eta * (1 + gd) + 2 * d * eta).
Proof.
  intros gm gd m d eta beta b1 q p T1 T2 T3 Hgm Hgd Hm Hd He Hq Hp [Hb0 Hb] Hpq H1 H2 H3.
  assert (Htri : Rabs (T1 + T2 + T3) <= Rabs T1 + Rabs T2 + Rabs T3).
  { eapply Rle_trans; [apply Rabs_triang|]. pose proof (Rabs_triang T1 T2). lra. }
  set (g2 := 2 * gd + gd ^ 2). assert (Hg2 : 0 <= g2) by (unfold g2; nra).
  assert (Hp2 : g2 * p <= g2 * ((1 + gm) * q + 2 * m * eta * b1 ^ 2)) by (apply Rmult_le_compat_l; lra).
  assert (Hsq : b1 ^ 2 <= (d * beta) ^ 2) by (apply pow_incr; lra).
  assert (Hme : 0 <= 2 * m * eta * (1 + gd) ^ 2) by (apply Rmult_le_pos; [nra | apply pow2_ge_0]).
  assert (Hc1 : 2 * m * eta * b1 ^ 2 * (1 + gd) ^ 2 <= 2 * m * eta * (d * beta) ^ 2 * (1 + gd) ^ 2).
  { replace (2 * m * eta * b1 ^ 2 * (1 + gd) ^ 2) with (2 * m * eta * (1 + gd) ^ 2 * b1 ^ 2) by ring.
    replace (2 * m * eta * (d * beta) ^ 2 * (1 + gd) ^ 2) with (2 * m * eta * (1 + gd) ^ 2 * (d * beta) ^ 2) by ring.
    apply Rmult_le_compat_l; lra. }
  assert (Hde : 0 <= 2 * d * eta * (1 + gd)) by (apply Rmult_le_pos; [nra | lra]).
  assert (Hc2 : 2 * d * eta * (1 + gd) * b1 <= 2 * d * eta * (1 + gd) * (d * beta)) by (apply Rmult_le_compat_l; lra).
  unfold g2 in *. nra.
Qed.
