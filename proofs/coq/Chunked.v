(** * Chunked dot products (Lemma 2.5)

    Backs [proofs/enclosure.md] §2 Lemma 2.5 ([|s - x^T y| <= gamma_(b+q-1)
    |x|^T|y| + 4 m eta] for [q >= 1] chunks of at most [b] pairs, each chunk
    any evaluation, their results added in any order); code:
    [certbound/enclose/fperror.py] ([chunked_gamma_length]: [b + ceil(k/b) - 1];
    any larger length, e.g. the earlier [b + ceil(k/b)], is sound too: [gamma]
    is monotone),
    used by the chunked SYRKs/GEMMs of [fperror.gram_deviation_bound],
    [symmetric_residual_norm_bound] and [gram.rounded_gram] (any chunk
    length [b]).

    A chunked evaluation is a [DotProduct.dtree] of a special shape: an
    outer tree of rounded additions ([otree]) whose leaves are the chunks'
    own evaluation trees (any order, with or without FMA).  Its height is at
    most [b + (q - 1)], so [DotProduct.dot_tree_error] gives the lemma
    directly (Higham's [gamma_b + gamma_(q-1) + gamma_b gamma_(q-1) <=
    gamma_(b+q-1)] is that height count). *)

From Coq Require Import Reals Psatz List Permutation Arith.
From Flocq Require Import Core.
From Certbound Require Import FPModel Summation DotProduct.
Open Scope R_scope.

Inductive otree : Type := OLeaf (t : dtree) | OAdd (l r : otree).

Fixpoint flat (o : otree) : dtree :=
  match o with OLeaf t => t | OAdd l r => DAdd (flat l) (flat r) end.
Fixpoint odepth (o : otree) : nat :=
  match o with OLeaf _ => 0 | OAdd l r => S (Nat.max (odepth l) (odepth r)) end.
Fixpoint ochunks (o : otree) : list dtree :=
  match o with OLeaf t => t :: nil | OAdd l r => ochunks l ++ ochunks r end.

Lemma odepth_le_chunks : forall o, (odepth o <= length (ochunks o) - 1)%nat.
Proof.
  induction o as [t | l IHl r IHr]; simpl; [lia|]. rewrite app_length.
  assert (forall o, (1 <= length (ochunks o))%nat) by (induction o; simpl; [lia | rewrite app_length; lia]).
  pose proof (H l). pose proof (H r). lia.
Qed.

Lemma flat_height : forall o b, (forall t, In t (ochunks o) -> (dheight t <= b)%nat) ->
  (dheight (flat o) <= b + odepth o)%nat.
Proof.
  induction o as [t | l IHl r IHr]; simpl; intros b H.
  - specialize (H t (or_introl eq_refl)). lia.
  - assert (Hl := IHl b (fun t Ht => H t (in_or_app _ _ _ (or_introl Ht)))).
    assert (Hr := IHr b (fun t Ht => H t (in_or_app _ _ _ (or_intror Ht)))). lia.
Qed.

(** Lemma 2.5: [q] chunks of at most [b] pairs each ([1 <= b]), any
    evaluation of each chunk and any order of the outer additions; [m]
    pairs in all (a permutation of the input [ps]). *)
Theorem chunked_dot_error : forall (o : otree) (ps : list (R * R)) (b q : nat),
  Permutation (dpairs (flat o)) ps ->
  (forall t, In t (ochunks o) -> (length (dpairs t) <= b)%nat) ->
  (1 <= q)%nat -> (length (ochunks o) <= q)%nat -> INR (b + q - 1) * u <= / 2 ->
  Rabs (dfl (flat o) - dot ps) <= gamma (b + q - 1) * absdot ps + 4 * INR (length ps) * eta.
Proof.
  intros o ps b q Hp Hb Hq1 Hq Hk.
  pose proof u_pos as Hu. pose proof eta_pos as He.
  assert (Hh : (dheight (flat o) <= b + q - 1)%nat).
  { pose proof (flat_height o b (fun t Ht => Nat.le_trans _ _ _ (dheight_le_count t) (Hb t Ht))).
    pose proof (odepth_le_chunks o). lia. }
  assert (Hbq : INR (b + q - 1) * u < 1) by lra.
  assert (Hh1 : INR (dheight (flat o)) * u < 1) by (apply (INR_mono_u _ (b + q - 1)); assumption).
  pose proof (dot_tree_error (flat o) Hh1) as E.
  assert (Hlen : length (dpairs (flat o)) = length ps) by (apply Permutation_length; exact Hp).
  rewrite dval_pairs, dabs_pairs in E. rewrite Hlen in E.
  unfold dot, absdot in *.
  rewrite (lsum_perm _ _ (Permutation_map _ Hp)), (lsum_perm _ _ (Permutation_map (fun p => Rabs (fst p) * Rabs (snd p)) Hp)) in E.
  pose proof (gamma_mono _ _ Hh Hbq) as G. pose proof (gamma_nonneg _ Hh1).
  pose proof (gamma_le_2ku (b + q - 1) Hk).
  assert (HA : 0 <= lsum (map (fun p => Rabs (fst p) * Rabs (snd p)) ps)).
  { clear. induction ps as [|p ps IH]; simpl; [lra|].
    pose proof (Rabs_pos (fst p)). pose proof (Rabs_pos (snd p)). nra. }
  assert (0 <= INR (length ps)) by apply pos_INR.
  eapply Rle_trans; [exact E|].
  apply Rplus_le_compat; [apply Rmult_le_compat_r; lra|].
  assert ((1 + gamma (dheight (flat o))) * INR (length ps) * (eta / 2) <= 2 * INR (length ps) * (eta / 2))
    by (apply Rmult_le_compat_r; [lra | apply Rmult_le_compat_r; lra]).
  assert (0 <= INR (length ps) * eta) by (apply Rmult_le_pos; lra).
  lra.
Qed.
