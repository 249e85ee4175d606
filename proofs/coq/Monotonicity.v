(** * Monotonicity in [n] ([proofs/theory-theorems.md] §6.5)

    Every entropy candidate has the form [u ln(vn+1) + w] with [u, v, w >= 0]
    independent of [n]; its ratio to [n] is nonincreasing on [n > 0]
    (mean value theorem with the derivative sign of
    [Scalars.entropy_over_n_derivative_sign]).  Hence [H_net/n], the Dudley
    sum and the confidence term are nonincreasing in [n] (sums, minima and
    [sqrt] of nonincreasing nonnegative functions: prose).  Code:
    [bounds._dudley.dudley_bound] and the non-vacuity search of
    [certbound demo] ([bounds._theorems]), which relies on it. *)

From Coq Require Import Reals Psatz.
From Coquelicot Require Import Coquelicot.
From Certbound Require Import Scalars.
Open Scope R_scope.

Section EntropyRatio.
Variables u v w : R.
Hypothesis Hu : 0 <= u.
Hypothesis Hv : 0 <= v.
Hypothesis Hw : 0 <= w.

Definition ratio (n : R) : R := (u * ln (v * n + 1) + w) / n.
Definition dratio (n : R) : R := (u * (v * n / (v * n + 1) - ln (v * n + 1)) - w) / (n * n).

Lemma is_derive_ratio : forall n, 0 < n -> is_derive ratio n (dratio n).
Proof.
  intros n Hn. assert (0 <= v * n) by nra. unfold ratio, dratio.
  auto_derive.
  - repeat split; lra.
  - field. lra.
Qed.

Theorem entropy_ratio_nonincreasing : forall n1 n2, 0 < n1 -> n1 <= n2 -> ratio n2 <= ratio n1.
Proof.
  intros n1 n2 H1 H12. destruct H12 as [Hlt|Heq]; [|rewrite Heq; lra].
  destruct (MVT_cor2 ratio dratio n1 n2 Hlt) as (c & Hc & Hcr).
  - intros c Hc. apply is_derive_Reals, is_derive_ratio. lra.
  - assert (Hd : dratio c <= 0).
    { unfold dratio. assert (0 < c * c) by nra.
      pose proof (entropy_over_n_derivative_sign u v w c Hu Hv Hw ltac:(lra)).
      unfold Rdiv. assert (0 < / (c * c)) by (apply Rinv_0_lt_compat; lra).
      assert (0 <= - (u * (v * c / (v * c + 1) - ln (v * c + 1)) - w) * / (c * c)) by (apply Rmult_le_pos; lra).
      lra. }
    assert (dratio c * (n2 - n1) <= 0).
    { assert (0 <= - dratio c * (n2 - n1)) by (apply Rmult_le_pos; lra). lra. }
    lra.
Qed.
End EntropyRatio.
