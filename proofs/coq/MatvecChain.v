(** * Lemma 2.2 with monotone chaining: nonnegative matrix-vector chains

    Backs [proofs/enclosure.md] §2 (Lemma 2.2 "and its monotone chaining",
    as used in §3, §8, §10 and [enclosure-gram.md] §2 Lemma G.2's
    *Evaluation* / "Blockwise evaluation"); code:
    [certbound/enclose/fperror.py] ([_inflate], [matvec_nonneg_upper]),
    [_stacked._mv], [_stacked.abs_gram_norm2_upper],
    [gram._abs_gram_matvec_upper] (per column chunk [y_C = _inflate(fl(|W_C|^T
    x), m)], then [z = _inflate(fl(sum_C fl(|W_C| y_C)), n)]).

    One entry of such a product is a dot product of nonnegative floats
    [a_l] (entries of [|W|]) with nonnegative floats [b_l] that are upper
    bounds of exact quantities [B_l] (the previous step's exact result),
    evaluated by ANY tree ([DotProduct.dtree]: BLAS order, blocking, chunk
    sums, FMA or not).  Then [_inflate] of the computed value bounds
    [sum a_l B_l] ([matvec_entry_upper]): the next step may use it as an
    upper bound again, so any chain of such products is an upper bound of
    the exact chain ([matvec_chain_step] is the induction step). *)

From Coq Require Import Reals Psatz List Permutation.
From Flocq Require Import Core.
From Certbound Require Import FPModel Summation DotProduct FastCertificate.
Open Scope R_scope.

Definition inflate (k : nat) (v : R) : R := fl (fl (v + 2 * (INR k + 2) * eta) * (1 + 2 * (INR k + 2) * u)).

Lemma dfl_nonneg : forall t, Forall (fun p => 0 <= fst p /\ 0 <= snd p) (dpairs t) -> 0 <= dfl t.
Proof.
  induction t as [a b | l IHl r IHr | a b r IHr]; simpl; intros H.
  - inversion H as [|? ? [Ha Hb] _]. apply fl_nonneg. simpl in *. nra.
  - apply Forall_app in H as [Hl Hr]. apply fl_nonneg. specialize (IHl Hl). specialize (IHr Hr). lra.
  - inversion H as [|? ? [Ha Hb] Hr]. simpl in *. apply fl_nonneg. specialize (IHr Hr). nra.
Qed.

(** One entry: [sum_l a_l B_l <= inflate k (fl(any tree of the pairs (a_l, b_l)))]
    for [0 <= B_l <= b_l], [a_l >= 0], [1 <= k = #pairs <= 2^40]. *)
Theorem matvec_entry_upper : forall (ps : list (R * R)) (Bs : list R) (t : dtree),
  Permutation (dpairs t) ps -> Forall (fun p => 0 <= fst p /\ 0 <= snd p) ps ->
  Forall2 (fun p B => 0 <= fst p /\ 0 <= B <= snd p) ps Bs ->
  (1 <= length ps)%nat -> INR (length ps) <= 2 ^ 40 ->
  lsum (map (fun pB => fst (fst pB) * snd pB) (combine ps Bs)) <= inflate (length ps) (dfl t).
Proof.
  intros ps Bs t Hp Hnn HB Hk1 Hk.
  assert (Hku : INR (length ps) * u <= / 4).
  { pose proof u_small. apply Rle_trans with (2 ^ 40 * / 2 ^ 53); [|simpl; lra].
    apply Rmult_le_compat; [apply pos_INR | left; apply u_pos | exact Hk | lra]. }
  pose proof (dot_nonneg_upper ps t Hp Hnn Hku) as Hd.
  assert (Hnn' : Forall (fun p => 0 <= fst p /\ 0 <= snd p) (dpairs t)).
  { rewrite Forall_forall in *. intros x Hx. apply Hnn. eapply Permutation_in; [exact Hp | exact Hx]. }
  assert (HS : 0 <= dot ps).
  { unfold dot. clear -Hnn. induction Hnn as [|p ps [H1 H2] _ IH]; simpl; [lra | nra]. }
  pose proof (inflate_upper (length ps) (dfl t) (dot ps) Hk1 Hk (dfl_format t) (dfl_nonneg t Hnn') HS Hd) as Hi.
  fold (inflate (length ps) (dfl t)) in Hi.
  eapply Rle_trans; [|exact Hi]. unfold dot.
  clear -HB. induction HB as [|p B ps Bs [Ha [H0 H1]] _ IH]; simpl; [lra|].
  assert (fst p * B <= fst p * snd p) by (apply Rmult_le_compat_l; lra). lra.
Qed.

(** The chain: the result is again a nonnegative float bounding the exact
    entry, so it can serve as the next product's [b_l] with [B_l] the exact
    entry. *)
Theorem matvec_chain_step : forall (ps : list (R * R)) (Bs : list R) (t : dtree),
  Permutation (dpairs t) ps -> Forall (fun p => 0 <= fst p /\ 0 <= snd p) ps ->
  Forall2 (fun p B => 0 <= fst p /\ 0 <= B <= snd p) ps Bs ->
  (1 <= length ps)%nat -> INR (length ps) <= 2 ^ 40 ->
  let S := lsum (map (fun pB => fst (fst pB) * snd pB) (combine ps Bs)) in
  format (inflate (length ps) (dfl t)) /\ 0 <= S <= inflate (length ps) (dfl t).
Proof.
  intros ps Bs t Hp Hnn HB Hk1 Hk S. split; [apply fl_format|]. split.
  - unfold S. clear -HB. induction HB as [|p B ps Bs [Ha [H0 H1]] _ IH]; simpl; [lra|].
    assert (0 <= fst p * B) by (apply Rmult_le_pos; lra). lra.
  - apply matvec_entry_upper; assumption.
Qed.
