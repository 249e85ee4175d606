(** * Lemma 8.1's quadratic forms through the doubled upper triangle ([enclosure.md] §8)

    [product._grams_and_abs_gram_norms] ([FORMS_TRMM_MIN_INNER], d >= 48)
    computes [T = fl(B V)] with [V = 2 triu(G, 1) + diag(G)]
    ([_doubled_upper_triangles]) instead of [T = fl(B G)].  For any real
    [d x d] [G] and vector [b]: [b^T V b = b^T G' b] and
    [|b|^T |V| |b| = |b|^T |G'| |b|] with [G' = triu(G) + triu(G, 1)^T]
    (symmetric, every entry an entry of [G]), so [Lemma81.v]'s budget
    applies with [G'] in place of [G]. *)

From Coq Require Import Reals Psatz.
From Certbound Require Import NormBounds.
Open Scope R_scope.

Definition dupper (G : nat -> nat -> R) (k l : nat) : R :=
  if lt_dec k l then 2 * G k l else if Nat.eq_dec k l then G k k else 0.
Definition gsym (G : nat -> nat -> R) (k l : nat) : R := if le_lt_dec k l then G k l else G l k.

Definition bform (d : nat) (M : nat -> nat -> R) (b : nat -> R) : R :=
  rsum d (fun k => rsum d (fun l => b k * M k l * b l)).

Theorem doubled_upper_form : forall d G b, bform d (dupper G) b = bform d (gsym G) b.
Proof.
  intros d G b. unfold bform.
  set (A := fun k l => b k * (if le_lt_dec k l then G k l else 0) * b l).
  set (B := fun k l => b k * (if lt_dec l k then G l k else 0) * b l).
  transitivity (rsum d (fun k => rsum d (fun l => A k l)) + rsum d (fun k => rsum d (fun l => B l k))).
  - rewrite <- rsum_add. apply rsum_ext. intros k _. rewrite <- rsum_add. apply rsum_ext. intros l _.
    unfold A, B, dupper. destruct (lt_dec k l), (Nat.eq_dec k l), (le_lt_dec k l), (lt_dec k l); subst; try lia; ring.
  - rewrite (rsum_swap d d (fun k l => B l k)). rewrite <- rsum_add. apply rsum_ext. intros k _.
    rewrite <- rsum_add. apply rsum_ext. intros l _.
    unfold A, B, gsym. destruct (le_lt_dec k l), (lt_dec l k); try lia; ring.
Qed.

Theorem doubled_upper_abs_form : forall d G b,
  bform d (fun k l => Rabs (dupper G k l)) (fun k => Rabs (b k))
  = bform d (fun k l => Rabs (gsym G k l)) (fun k => Rabs (b k)).
Proof.
  intros d G b. unfold bform.
  rewrite (rsum_ext d _ (fun k => rsum d (fun l => Rabs (b k) * dupper (fun p q => Rabs (G p q)) k l * Rabs (b l)))).
  2:{ intros k _. apply rsum_ext. intros l _. unfold dupper.
      destruct (lt_dec k l), (Nat.eq_dec k l); [rewrite Rabs_mult, (Rabs_pos_eq 2) by lra; reflexivity|
        rewrite Rabs_mult, (Rabs_pos_eq 2) by lra; reflexivity|reflexivity|rewrite Rabs_R0; reflexivity]. }
  rewrite (rsum_ext d (fun k => rsum d (fun l => Rabs (b k) * Rabs (gsym G k l) * Rabs (b l)))
             (fun k => rsum d (fun l => Rabs (b k) * gsym (fun p q => Rabs (G p q)) k l * Rabs (b l)))).
  2:{ intros k _. apply rsum_ext. intros l _. unfold gsym. destruct (le_lt_dec k l); reflexivity. }
  exact (doubled_upper_form d (fun p q => Rabs (G p q)) (fun k => Rabs (b k))).
Qed.

Lemma gsym_entry : forall G k l, gsym G k l = G k l \/ gsym G k l = G l k.
Proof. intros. unfold gsym. destruct (le_lt_dec k l); [left|right]; reflexivity. Qed.
