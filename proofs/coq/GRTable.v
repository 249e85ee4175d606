(** * Theorem G-R's table of per-product error bounds, from the dot-product model

    Backs [proofs/enclosure-reconstruct.md] §3 (Lemma R.3's table and its
    evaluation) and §5 (the float helpers); code:
    [certbound/enclose/reconstruct.py] ([_prepare]'s [U], [_reconstruct]'s
    loop: [Y], [Z], [M], [H], [W], [X'], and the float formulas [eU], [eY]
    of [_static_bounds], [eZ], [eM], [eH], [eW], [e5] of [_bounds]).

    The model of one computed entry is that of [DotProduct.v]: ANY binary
    tree of rounded products, rounded additions and FMA nodes whose pairs
    are a permutation of the exact inner product's pairs (any BLAS order,
    blocking, FMA or not); a chunked product ([Chunked.v]) is such a tree
    whose chunks are added by any tree of rounded additions.  The code pads
    its stacks with zeros (unused reflector slots, rows [>= n_j] up to whole
    chunks) and its constants use the LIVE lengths: here [prune] removes
    the zero products of a tree ([fl(0) = 0], [fl(x + 0) = x] for a float
    [x], so the result is unchanged), the pruned tree has the height of the
    live data ([pruned_height_plain], [pruned_height_chunked]: at most [c]
    pairs per chunk and [q] chunks holding a nonzero product give
    [c + q - 1]) and its underflow term counts the nonzero products only
    ([bounded_entry_error]).  The matrix step is [NormBounds]'
    entrywise assembly ([product_error_opbound]); the code's float formula
    [up(up(g N) + K)] with [g >= gamma_h], [N >=] the norm of the
    [|.|]-product and [K] the code's underflow term (some of them a rounded
    product with no step up: [eta_term_rounded] shows the slack covers it)
    is [product_error_float]. *)

From Coq Require Import Reals Psatz List Permutation Arith.
From Flocq Require Import Core.
From Certbound Require Import FPModel Summation DotProduct Chunked NormBounds OneStep Lemma112 TheoremGR.
Import ListNotations.
Open Scope R_scope.

Local Notation succ := (succ radix2 fexp).

(** ** Pruning the zero products of an evaluation tree *)

Definition nzb (p : R * R) : bool := if Req_EM_T (fst p * snd p) 0 then false else true.

Fixpoint prune (t : dtree) : option dtree :=
  match t with
  | DProd a b => if Req_EM_T (a * b) 0 then None else Some (DProd a b)
  | DAdd l r =>
      match prune l, prune r with
      | None, None => None
      | Some l', None => Some l'
      | None, Some r' => Some r'
      | Some l', Some r' => Some (DAdd l' r')
      end
  | DFma a b r =>
      match prune r with
      | None => if Req_EM_T (a * b) 0 then None else Some (DProd a b)
      | Some r' => if Req_EM_T (a * b) 0 then Some r' else Some (DFma a b r')
      end
  end.

Lemma nzb_zero : forall a b, a * b = 0 -> nzb (a, b) = false.
Proof. intros a b E. unfold nzb; simpl. destruct (Req_EM_T (a * b) 0); [reflexivity|contradiction]. Qed.

Lemma nzb_nonzero : forall a b, a * b <> 0 -> nzb (a, b) = true.
Proof. intros a b E. unfold nzb; simpl. destruct (Req_EM_T (a * b) 0); [contradiction|reflexivity]. Qed.

Lemma abs_prod_zero : forall a b, a * b = 0 -> Rabs a * Rabs b = 0.
Proof. intros a b H. rewrite <- Rabs_mult, H. apply Rabs_R0. Qed.

Lemma fl_plus_0_r : forall x, format x -> fl (x + 0) = x.
Proof. intros x H. rewrite Rplus_0_r. apply fl_exact, H. Qed.

Lemma fl_plus_0_l : forall x, format x -> fl (0 + x) = x.
Proof. intros x H. rewrite Rplus_0_l. apply fl_exact, H. Qed.

(** Pruning keeps the computed value, the exact value and the absolute
    sum; it keeps exactly the nonzero products and does not grow the tree. *)
Lemma prune_spec : forall t,
  match prune t with
  | None => dfl t = 0 /\ dval t = 0 /\ dabs t = 0 /\ filter nzb (dpairs t) = nil
  | Some t' => dfl t' = dfl t /\ dval t' = dval t /\ dabs t' = dabs t /\
               dpairs t' = filter nzb (dpairs t) /\ (dheight t' <= dheight t)%nat
  end.
Proof.
  induction t as [a b | l IHl r IHr | a b r IHr]; simpl.
  - destruct (Req_EM_T (a * b) 0) as [E|E]; simpl.
    + rewrite (nzb_zero a b E), (abs_prod_zero a b E), E, fl_0. repeat split.
    + rewrite (nzb_nonzero a b E). repeat split; lia.
  - destruct (prune l) as [l'|]; destruct (prune r) as [r'|]; rewrite filter_app.
    + destruct IHl as (H1 & H2 & H3 & H4 & H5). destruct IHr as (G1 & G2 & G3 & G4 & G5). simpl.
      rewrite H1, H2, H3, G1, G2, G3, H4, G4. repeat split; lia.
    + destruct IHl as (H1 & H2 & H3 & H4 & H5). destruct IHr as (G1 & G2 & G3 & G4).
      rewrite G1, G2, G3, G4, app_nil_r, fl_plus_0_r by apply dfl_format.
      repeat split; try lra; [exact H4|lia].
    + destruct IHl as (H1 & H2 & H3 & H4). destruct IHr as (G1 & G2 & G3 & G4 & G5).
      rewrite H1, H2, H3, H4, app_nil_l, fl_plus_0_l by apply dfl_format.
      repeat split; try lra; [exact G4|lia].
    + destruct IHl as (H1 & H2 & H3 & H4). destruct IHr as (G1 & G2 & G3 & G4).
      rewrite H1, H2, H3, H4, G1, G2, G3, G4, Rplus_0_l, fl_0. repeat split; lra.
  - destruct (prune r) as [r'|].
    + destruct IHr as (G1 & G2 & G3 & G4 & G5).
      destruct (Req_EM_T (a * b) 0) as [E|E]; simpl.
      * rewrite (nzb_zero a b E), (abs_prod_zero a b E), E, fl_plus_0_l by apply dfl_format.
        repeat split; try lra; [exact G4|lia].
      * rewrite (nzb_nonzero a b E), G1, G2, G3, G4. repeat split; lia.
    + destruct IHr as (G1 & G2 & G3 & G4). rewrite G1, G2, G3.
      destruct (Req_EM_T (a * b) 0) as [E|E]; simpl.
      * rewrite (nzb_zero a b E), G4, (abs_prod_zero a b E), E, Rplus_0_l, fl_0. repeat split; lra.
      * rewrite (nzb_nonzero a b E), G4, Rplus_0_r. repeat split; try lra; try lia.
Qed.

Definition nzcount (ps : list (R * R)) : nat := length (filter nzb ps).

Lemma nzcount_perm : forall ps qs, Permutation ps qs -> nzcount ps = nzcount qs.
Proof.
  intros ps qs H. unfold nzcount. apply Permutation_length.
  induction H as [|x l l' _ IH|x y l|l l' l'' _ IH1 _ IH2]; simpl.
  - constructor.
  - destruct (nzb x); [apply perm_skip|]; exact IH.
  - destruct (nzb x); destruct (nzb y); try constructor; try apply Permutation_refl; apply perm_swap.
  - eapply Permutation_trans; eassumption.
Qed.

Lemma nzcount_le : forall ps, (nzcount ps <= length ps)%nat.
Proof. intros ps. unfold nzcount. induction ps as [|p ps IH]; simpl; [lia|]. destruct (nzb p); simpl; lia. Qed.

(** The error of any tree, in terms of its pruned height and its count of
    nonzero products. *)
Theorem bounded_entry_error : forall t h c,
  (forall t', prune t = Some t' -> (dheight t' <= h)%nat) ->
  (nzcount (dpairs t) <= c)%nat -> INR h * u <= / 2 ->
  Rabs (dfl t - dval t) <= gamma h * dabs t + INR c * eta.
Proof.
  intros t h c Hh Hc Hu. pose proof u_pos. pose proof eta_pos.
  assert (Hg0 : 0 <= gamma h) by (apply gamma_nonneg; lra).
  assert (Hc0 : 0 <= INR c) by apply pos_INR.
  pose proof (prune_spec t) as P. destruct (prune t) as [t'|] eqn:Et.
  - destruct P as (H1 & H2 & H3 & H4 & _). specialize (Hh t' eq_refl).
    rewrite <- H1, <- H2, <- H3.
    assert (Hh' : INR (dheight t') * u < 1).
    { apply (INR_mono_u _ h); [exact Hh|lra]. }
    eapply Rle_trans; [apply dot_tree_error, Hh'|].
    pose proof (gamma_mono _ _ Hh ltac:(lra)) as G. pose proof (gamma_le_2ku h Hu).
    pose proof (gamma_nonneg _ Hh'). pose proof (dabs_nonneg t').
    assert (Hl : INR (length (dpairs t')) <= INR c).
    { apply le_INR. rewrite H4. exact Hc. }
    apply Rplus_le_compat; [apply Rmult_le_compat_r; lra|].
    assert (gamma (dheight t') <= 1) by lra. pose proof (pos_INR (length (dpairs t'))).
    assert ((1 + gamma (dheight t')) * INR (length (dpairs t')) * (eta / 2) <= 2 * INR (length (dpairs t')) * (eta / 2))
      by (apply Rmult_le_compat_r; [lra|apply Rmult_le_compat_r; lra]).
    nra.
  - destruct P as (H1 & H2 & H3 & _). rewrite H1, H2, H3, Rminus_0_r, Rabs_R0.
    apply Rplus_le_le_0_compat; [lra|]. apply Rmult_le_pos; lra.
Qed.

(** Heights of the pruned tree: a plain tree has at most one rounding per
    nonzero product on a path; a chunked one at most [c + q - 1]. *)
Lemma pruned_height_plain : forall t t', prune t = Some t' -> (dheight t' <= nzcount (dpairs t))%nat.
Proof.
  intros t t' E. pose proof (prune_spec t) as P. rewrite E in P. destruct P as (_ & _ & _ & H4 & _).
  unfold nzcount. rewrite <- H4. apply dheight_le_count.
Qed.

Lemma prune_some_nz : forall t t', prune t = Some t' -> (1 <= nzcount (dpairs t))%nat.
Proof.
  intros t t' E. pose proof (prune_spec t) as P. rewrite E in P. destruct P as (_ & _ & _ & H4 & _).
  unfold nzcount. rewrite <- H4. pose proof (dheight_le_count t'). pose proof (dheight_pos t'). lia.
Qed.

Lemma prune_none_nz : forall t, prune t = None -> nzcount (dpairs t) = O.
Proof.
  intros t E. pose proof (prune_spec t) as P. rewrite E in P. destruct P as (_ & _ & _ & H4).
  unfold nzcount. rewrite H4. reflexivity.
Qed.

(** The chunks that hold a nonzero product. *)
Definition nzchunks (o : otree) : nat :=
  length (filter (fun t => negb (Nat.eqb (nzcount (dpairs t)) 0)) (ochunks o)).

Lemma pruned_height_chunked_aux : forall o c,
  (forall t, In t (ochunks o) -> (nzcount (dpairs t) <= c)%nat) ->
  forall t', prune (flat o) = Some t' -> (1 <= nzchunks o)%nat /\ (dheight t' <= c + nzchunks o - 1)%nat.
Proof.
  induction o as [t | l IHl r IHr]; intros c Hc t' E; simpl in E.
  - unfold nzchunks. simpl. pose proof (prune_some_nz t t' E) as H1.
    destruct (Nat.eqb (nzcount (dpairs t)) 0) eqn:Ez; [apply Nat.eqb_eq in Ez; lia|]. simpl.
    pose proof (pruned_height_plain t t' E). specialize (Hc t (or_introl eq_refl)). lia.
  - assert (Hl : forall t, In t (ochunks l) -> (nzcount (dpairs t) <= c)%nat)
      by (intros t Ht; apply Hc; simpl; apply in_or_app; left; exact Ht).
    assert (Hr : forall t, In t (ochunks r) -> (nzcount (dpairs t) <= c)%nat)
      by (intros t Ht; apply Hc; simpl; apply in_or_app; right; exact Ht).
    assert (En : nzchunks (OAdd l r) = (nzchunks l + nzchunks r)%nat)
      by (unfold nzchunks; simpl; rewrite filter_app, app_length; reflexivity).
    rewrite En.
    destruct (prune (flat l)) as [l'|] eqn:El; destruct (prune (flat r)) as [r'|] eqn:Er; try discriminate.
    + injection E as E. subst t'. destruct (IHl c Hl _ eq_refl) as [A1 A2]. destruct (IHr c Hr _ eq_refl) as [B1 B2].
      simpl. lia.
    + injection E as E. subst t'. destruct (IHl c Hl _ eq_refl) as [A1 A2]. lia.
    + injection E as E. subst t'. destruct (IHr c Hr _ eq_refl) as [B1 B2]. lia.
Qed.

Lemma pruned_height_chunked : forall o c t',
  (forall t, In t (ochunks o) -> (nzcount (dpairs t) <= c)%nat) ->
  prune (flat o) = Some t' -> (dheight t' <= c + nzchunks o - 1)%nat.
Proof. intros o c t' Hc E. apply (pruned_height_chunked_aux o c Hc t' E). Qed.

Lemma nzchunks_le : forall o, (nzchunks o <= length (ochunks o))%nat.
Proof.
  intros o. unfold nzchunks. induction (ochunks o) as [|t ts IH]; simpl; [lia|].
  destruct (negb _); simpl; lia.
Qed.

(** ** One entry of a product, and the matrix bound *)

Definition pairs_of (q : nat) (A B : nat -> nat -> R) (i j : nat) : list (R * R) :=
  map (fun l => (A i l, B l j)) (seq 0 q).

(** [x] is computed from the pairs [ps] by some evaluation tree whose
    pruned height is at most [h], with at most [c] nonzero products. *)
Definition bounded_eval (h c : nat) (ps : list (R * R)) (x : R) : Prop :=
  exists t, x = dfl t /\ Permutation (dpairs t) ps /\
    (forall t', prune t = Some t' -> (dheight t' <= h)%nat) /\ (nzcount ps <= c)%nat.

Lemma bounded_weaken : forall h c h' c' ps x, (h <= h')%nat -> (c <= c')%nat ->
  bounded_eval h c ps x -> bounded_eval h' c' ps x.
Proof.
  intros h c h' c' ps x H1 H2 (t & E & P & Hh & Hc). exists t. repeat split; try assumption; [|lia].
  intros t' Et. specialize (Hh t' Et). lia.
Qed.

(** Any evaluation tree (Lemma 2.1's model). *)
Lemma tree_bounded : forall t ps, Permutation (dpairs t) ps ->
  bounded_eval (nzcount ps) (nzcount ps) ps (dfl t).
Proof.
  intros t ps P. exists t. repeat split; [exact P| |lia].
  intros t' Et. rewrite <- (nzcount_perm _ _ P). apply pruned_height_plain, Et.
Qed.

(** A chunked evaluation (Lemma 2.5's model): chunks of at most [c]
    nonzero products, at most [q] chunks holding one; its height is also at
    most the number of nonzero products (Lemma 2.1: the code's
    [min(c + q - 1, n)]). *)
Lemma chunked_bounded : forall o ps c q, Permutation (dpairs (flat o)) ps ->
  (forall t, In t (ochunks o) -> (nzcount (dpairs t) <= c)%nat) -> (nzchunks o <= q)%nat ->
  bounded_eval (Nat.min (c + q - 1) (nzcount ps)) (nzcount ps) ps (dfl (flat o)).
Proof.
  intros o ps c q P Hc Hq. exists (flat o). repeat split; [exact P| |lia].
  intros t' Et. apply Nat.min_glb.
  - pose proof (pruned_height_chunked o c t' Hc Et). lia.
  - rewrite <- (nzcount_perm _ _ P). apply pruned_height_plain, Et.
Qed.

Lemma nzcount_app : forall a b, nzcount (a ++ b) = (nzcount a + nzcount b)%nat.
Proof. intros a b. unfold nzcount. rewrite filter_app, app_length. reflexivity. Qed.

(** Zero padding: if the terms [l >= q'] vanish, at most [q'] products are nonzero. *)
Lemma nzcount_live : forall q q' (f : nat -> R * R),
  (forall l, (q' <= l < q)%nat -> fst (f l) * snd (f l) = 0) -> (nzcount (map f (seq 0 q)) <= q')%nat.
Proof.
  induction q as [|q IH]; intros q' f H; [unfold nzcount; simpl; lia|].
  rewrite seq_S, map_app, nzcount_app. simpl map.
  destruct (le_lt_dec q' q) as [Hq|Hq].
  - assert (E : nzcount [f q] = O).
    { unfold nzcount. simpl. destruct (f q) as [a b] eqn:Ef.
      rewrite nzb_zero; [reflexivity|]. specialize (H q ltac:(lia)). rewrite Ef in H. exact H. }
    rewrite E. assert (IH' := IH q' f (fun l Hl => H l ltac:(lia))). lia.
  - pose proof (nzcount_le (map f (seq 0 q))) as L1. rewrite map_length, seq_length in L1.
    pose proof (nzcount_le [f q]) as L2. simpl in L2. lia.
Qed.

Lemma dot_pairs_of : forall q A B i j, dot (pairs_of q A B i j) = mmul q A B i j.
Proof. intros. unfold dot, pairs_of, mmul. rewrite map_map. simpl. apply lsum_map_seq. Qed.

Lemma absdot_pairs_of : forall q A B i j, absdot (pairs_of q A B i j) = mmul q (mabs A) (mabs B) i j.
Proof. intros. unfold absdot, pairs_of, mmul, mabs. rewrite map_map. simpl. apply lsum_map_seq. Qed.

Theorem bounded_product_entry : forall q A B i j h c x,
  bounded_eval h c (pairs_of q A B i j) x -> INR h * u <= / 2 ->
  Rabs (x - mmul q A B i j) <= gamma h * mmul q (mabs A) (mabs B) i j + INR c * eta.
Proof.
  intros q A B i j h c x (t & -> & P & Hh & Hc) Hu.
  rewrite <- dot_pairs_of, <- absdot_pairs_of.
  unfold dot, absdot. rewrite <- (lsum_perm _ _ (Permutation_map _ P)),
    <- (lsum_perm _ _ (Permutation_map (fun p => Rabs (fst p) * Rabs (snd p)) P)).
  fold (dot (dpairs t)) (absdot (dpairs t)). rewrite <- dval_pairs, <- dabs_pairs.
  apply bounded_entry_error; [exact Hh| |exact Hu]. rewrite (nzcount_perm _ _ P). exact Hc.
Qed.

(** Lemma 2.1 / 2.5 entrywise, then [||E||_2 <= gamma_h || |A||B| ||_2 + c eta sqrt(m p)]. *)
Theorem product_error_opbound : forall m p q A B C h c N,
  (forall i j, (i < m)%nat -> (j < p)%nat -> bounded_eval h c (pairs_of q A B i j) (C i j)) ->
  INR h * u <= / 2 -> opbound m p (mmul q (mabs A) (mabs B)) N ->
  opbound m p (msub C (mmul q A B)) (gamma h * N + INR c * eta * sqrt (INR m * INR p)).
Proof.
  intros m p q A B C h c N HC Hu HN. pose proof u_pos. pose proof eta_pos.
  replace (gamma h * N + INR c * eta * sqrt (INR m * INR p))
    with (0 + rsum 0 (fun t => 0 * 0) + gamma h * N + INR c * eta * sqrt (INR m * INR p)) by (simpl; ring).
  apply (entrywise_assembly m p (msub C (mmul q A B)) (fun _ _ => 0) 0 0 (fun _ => 0) (fun _ _ _ => 0) (fun _ => 0)
    (gamma h) (mmul q (mabs A) (mabs B)) N (INR c * eta)).
  - apply opbound_zero.
  - intros t Ht. lia.
  - intros t Ht. lia.
  - apply gamma_nonneg. lra.
  - intros i j _ _. unfold mmul, mabs. apply rsum_nonneg. intros; apply Rmult_le_pos; apply Rabs_pos.
  - exact HN.
  - apply Rmult_le_pos; [apply pos_INR|lra].
  - intros i j Hi Hj. simpl. rewrite Rminus_0_r, Rplus_0_l. unfold msub.
    apply (bounded_product_entry q A B i j h c), Hu. apply HC; assumption.
Qed.

(** The code's float form [up(up(g N) + K)]. *)
Theorem product_error_float : forall m p q A B C h c N g Nf K,
  (forall i j, (i < m)%nat -> (j < p)%nat -> bounded_eval h c (pairs_of q A B i j) (C i j)) ->
  INR h * u <= / 2 -> opbound m p (mmul q (mabs A) (mabs B)) N -> gamma h <= g -> N <= Nf ->
  INR c * eta * sqrt (INR m * INR p) <= K ->
  opbound m p (msub C (mmul q A B)) (succ (fl (succ (fl (g * Nf)) + K))).
Proof.
  intros m p q A B C h c N g Nf K HC Hu HN Hg HNf HK. pose proof u_pos.
  apply (opbound_weaken _ _ _ _ _ (product_error_opbound m p q A B C h c N HC Hu HN)).
  assert (0 <= gamma h) by (apply gamma_nonneg; lra). destruct HN as [HN0 _].
  apply up_add; [apply up_mul; lra|exact HK].
Qed.

(** ** The code's underflow terms *)

Lemma nat_bound_Z : forall a : nat, INR a <= 2 ^ 40 -> (Z.of_nat a <= 1099511627776)%Z.
Proof. intros a Ha. apply le_IZR. rewrite <- INR_IZR_INZ. simpl in Ha. lra. Qed.

Lemma format_nat_eta : forall a : nat, INR a <= 2 ^ 40 -> format (INR a * eta).
Proof.
  intros a Ha. apply generic_format_FLT.
  apply FLT_spec with (f := Float radix2 (Z.of_nat a) (-1074)).
  - unfold F2R, eta. cbn [Fnum Fexp]. rewrite <- INR_IZR_INZ. reflexivity.
  - cbn [Fnum]. unfold prec. pose proof (nat_bound_Z a Ha). apply Z.abs_lt.
    change (radix2 ^ 53)%Z with 9007199254740992%Z. lia.
  - simpl. unfold emin. lia.
Qed.

Lemma format_nat : forall a : nat, INR a <= 2 ^ 40 -> format (INR a).
Proof.
  intros a Ha. apply generic_format_FLT.
  apply FLT_spec with (f := Float radix2 (Z.of_nat a) 0).
  - unfold F2R. cbn [Fnum Fexp]. rewrite <- INR_IZR_INZ. simpl. ring.
  - cbn [Fnum]. unfold prec. pose proof (nat_bound_Z a Ha). apply Z.abs_lt.
    change (radix2 ^ 53)%Z with 9007199254740992%Z. lia.
  - simpl. unfold emin. lia.
Qed.

(** A product of small integers (the code's [4.0 * bb], [2.0 * bb * bb],
    [4.0 * kp * bb], [nb * bb], ...) is exact. *)
Lemma fl_nat_mul : forall a b : nat, INR a * INR b <= 2 ^ 40 -> fl (INR a * INR b) = INR a * INR b.
Proof. intros a b H. rewrite <- mult_INR. apply fl_exact, format_nat. rewrite mult_INR. exact H. Qed.

Lemma fl_nat_eta : forall a : nat, INR a <= 2 ^ 40 -> fl (INR a * eta) = INR a * eta.
Proof. intros a H. apply fl_exact, format_nat_eta, H. Qed.

(** A rounded product [>= eta] keeps at least half of its value (relative
    error [<= u] or absolute error [<= eta/2], not both): the code's
    [x * ETA * rtn] with no step up. *)
Lemma fl_lower_half : forall x, eta <= x -> x / 2 <= fl x.
Proof.
  intros x Hx. pose proof u_pos. pose proof u_small. pose proof eta_pos.
  destruct (standard_model x) as (d & e & Hd & He & Hde & Hf). rewrite Hf.
  apply Rmult_integral in Hde as [ -> | -> ].
  - apply Rabs_le_inv in He. lra.
  - apply Rabs_le_inv in Hd. assert (u <= / 4) by (simpl in *; lra). nra.
Qed.

(** [INR c * eta * s <= fl(fl(INR a * eta) * rt)] for [s <= rt], [1 <= rt],
    [c <= a/2]: the rounded underflow terms [4 b eta sqrt(nb)] ([c = b]... the
    count of the bound needs only half). *)
Lemma eta_term_rounded : forall (a c : nat) rt s, (1 <= a)%nat -> INR a <= 2 ^ 40 -> 1 <= rt -> 0 <= s <= rt ->
  2 * INR c <= INR a -> INR c * eta * s <= fl (fl (INR a * eta) * rt).
Proof.
  intros a c rt s Ha1 Ha Hrt Hs Hc. pose proof eta_pos. rewrite fl_nat_eta by exact Ha.
  assert (Ha1' : 1 <= INR a) by (replace 1 with (INR 1) by reflexivity; apply le_INR; exact Ha1).
  assert (Hae : eta <= INR a * eta) by nra.
  assert (Hx : eta <= INR a * eta * rt) by nra.
  eapply Rle_trans; [|apply fl_lower_half, Hx].
  pose proof (pos_INR c). assert (INR c * eta * s <= INR c * eta * rt) by (apply Rmult_le_compat_l; nra). nra.
Qed.

Lemma sqrt_le_rt : forall x rt, 0 <= x -> sqrt x <= succ (fl (sqrt x)) /\ (sqrt x <= rt -> 0 <= sqrt x <= rt).
Proof. intros x rt Hx. split; [apply step_up; lra|]. intros H. split; [apply sqrt_pos|exact H]. Qed.

From Certbound Require Import R4Support.

(** ** Zero padding and transposed products *)

Lemma mmul_pad : forall q q' (A B : nat -> nat -> R) i j, (q' <= q)%nat ->
  (forall l, (q' <= l < q)%nat -> A i l * B l j = 0) -> mmul q A B i j = mmul q' A B i j.
Proof.
  intros q q' A B i j Hq H. unfold mmul. replace q with (q' + (q - q'))%nat by lia. rewrite rsum_split.
  rewrite (rsum_ext (q - q') _ (fun _ => 0)) by (intros l Hl; apply H; lia). rewrite rsum_zero. ring.
Qed.

Lemma abs_pad : forall (A B : nat -> nat -> R) i j l, A i l * B l j = 0 -> mabs A i l * mabs B l j = 0.
Proof. intros A B i j l H. unfold mabs. apply abs_prod_zero, H. Qed.

(** A product over [q] padded terms of which the terms [l >= q'] vanish. *)
Theorem product_error_float_pad : forall m p q q' A B C h c N g Nf K,
  (q' <= q)%nat -> (forall i j l, (i < m)%nat -> (j < p)%nat -> (q' <= l < q)%nat -> A i l * B l j = 0) ->
  (forall i j, (i < m)%nat -> (j < p)%nat -> bounded_eval h c (pairs_of q A B i j) (C i j)) ->
  INR h * u <= / 2 -> opbound m p (mmul q' (mabs A) (mabs B)) N -> gamma h <= g -> N <= Nf ->
  INR c * eta * sqrt (INR m * INR p) <= K ->
  opbound m p (msub C (mmul q' A B)) (succ (fl (succ (fl (g * Nf)) + K))).
Proof.
  intros m p q q' A B C h c N g Nf K Hq Hz HC Hu HN Hg HNf HK.
  apply (opbound_ext m p (msub C (mmul q A B))).
  - intros i j Hi Hj. unfold msub. rewrite (mmul_pad q q') by (try exact Hq; intros; apply Hz; assumption). reflexivity.
  - apply (product_error_float m p q A B C h c N g Nf K HC Hu); try assumption.
    apply (opbound_ext m p (mmul q' (mabs A) (mabs B))); [|exact HN].
    intros i j Hi Hj. symmetry. apply mmul_pad; [exact Hq|]. intros l Hl. apply abs_pad, Hz; assumption.
Qed.

(** The code computes the transpose [C^T = fl(B^T A^T)] ([U_j^T = T_j V_j^T]
    in [_prepare]'s stacks, [H^T = fl(M^T V^T)] in the loop). *)
Theorem product_error_float_tr : forall m p q q' A B Ct h c N g Nf K,
  (q' <= q)%nat -> (forall i j l, (i < m)%nat -> (j < p)%nat -> (q' <= l < q)%nat -> A i l * B l j = 0) ->
  (forall j i, (j < p)%nat -> (i < m)%nat -> bounded_eval h c (pairs_of q (mtr B) (mtr A) j i) (Ct j i)) ->
  INR h * u <= / 2 -> opbound m p (mmul q' (mabs A) (mabs B)) N -> gamma h <= g -> N <= Nf ->
  INR c * eta * sqrt (INR m * INR p) <= K ->
  opbound m p (msub (mtr Ct) (mmul q' A B)) (succ (fl (succ (fl (g * Nf)) + K))).
Proof.
  intros m p q q' A B Ct h c N g Nf K Hq Hz HC Hu HN Hg HNf HK.
  assert (H : opbound p m (msub Ct (mmul q' (mtr B) (mtr A))) (succ (fl (succ (fl (g * Nf)) + K)))).
  { apply (product_error_float_pad p m q q' (mtr B) (mtr A) Ct h c N g Nf K Hq); try assumption.
    - intros j i l Hj Hi Hl. unfold mtr. rewrite Rmult_comm. apply Hz; assumption.
    - apply (opbound_ext p m (mtr (mmul q' (mabs A) (mabs B)))); [|apply opbound_transpose, HN].
      intros j i _ _. unfold mtr, mmul, mabs. apply rsum_ext. intros; ring.
    - rewrite (Rmult_comm (INR p) (INR m)). exact HK. }
  apply (opbound_ext m p (mtr (msub Ct (mmul q' (mtr B) (mtr A))))); [|apply opbound_transpose, H].
  intros i j _ _. unfold mtr, msub, mmul. f_equal. apply rsum_ext. intros; ring.
Qed.

(** ** The code's underflow terms, literally *)

Lemma fl_4_nat : forall a : nat, 4 * INR a <= 2 ^ 40 -> fl (4 * INR a) = INR (4 * a).
Proof.
  intros a H. rewrite mult_INR. replace (INR 4) with 4 by (simpl; ring). apply fl_exact.
  replace (4 * INR a) with (INR (4 * a)) by (rewrite mult_INR; simpl; ring). apply format_nat.
  rewrite mult_INR. replace (INR 4) with 4 by (simpl; ring). exact H.
Qed.

Lemma fl_2_nat : forall a : nat, 2 * INR a <= 2 ^ 40 -> fl (2 * INR a) = INR (2 * a).
Proof.
  intros a H. rewrite mult_INR. replace (INR 2) with 2 by (simpl; ring). apply fl_exact.
  replace (2 * INR a) with (INR (2 * a)) by (rewrite mult_INR; simpl; ring). apply format_nat.
  rewrite mult_INR. replace (INR 2) with 2 by (simpl; ring). exact H.
Qed.

(** [fl(fl(INR a * eta) * INR b) = INR a * eta * INR b] (an integer
    multiple of [eta] below [2^40 eta]). *)
Lemma fl_nat_eta_mul : forall a b : nat, INR a <= 2 ^ 40 -> INR a * INR b <= 2 ^ 40 ->
  fl (fl (INR a * eta) * INR b) = INR a * eta * INR b.
Proof.
  intros a b Ha H. rewrite fl_nat_eta by exact Ha.
  replace (INR a * eta * INR b) with (INR (a * b) * eta) by (rewrite mult_INR; ring).
  apply fl_nat_eta. rewrite mult_INR. exact H.
Qed.

Lemma sqrt_sq_nat : forall b : nat, sqrt (INR b * INR b) = INR b.
Proof. intros b. apply sqrt_square, pos_INR. Qed.

(** ** Lemma R.3's table, row by row, with the code's float formulas *)

(** [U = fl(V T^T)]: [_prepare] forms the slab [U_j^T = T_j V_j^T] over the
    [bp] slots of the stack (the [b] live ones first, [T]'s other columns
    zero), inner index in chunks of [chunk_u] (running sum):
    [eU = up(up(g_u vt) + 4 b eta rtn)], [vt >= || |V||T|^T ||_2]
    ([_chain_norm_sq_upper]), [rtn >= sqrt(n b)]. *)
Theorem gr_eU_float : forall n b bp (V T Ut : nat -> nat -> R) hU gU vt rt,
  (b <= bp)%nat -> (1 <= b)%nat -> 4 * INR b <= 2 ^ 40 ->
  (forall l l', (l < b)%nat -> (b <= l' < bp)%nat -> T l l' = 0) ->
  (forall l i, (l < b)%nat -> (i < n)%nat -> bounded_eval hU b (pairs_of bp T (mtr V) l i) (Ut l i)) ->
  INR hU * u <= / 2 -> gamma hU <= gU ->
  opbound n b (mmul b (mabs V) (mabs (mtr T))) vt ->
  sqrt (INR n * INR b) <= rt -> 1 <= rt ->
  opbound n b (msub (mtr Ut) (mmul b V (mtr T)))
    (succ (fl (succ (fl (gU * vt)) + fl (fl (fl (4 * INR b) * eta) * rt)))).
Proof.
  intros n b bp V T Ut hU gU vt rt Hb Hb1 Hb4 HT HU Hu Hg Hvt Hrt Hrt1.
  apply (product_error_float_tr n b bp b V (mtr T) Ut hU b vt gU vt); try assumption; try lra.
  - intros i l l' Hi Hl Hl'. unfold mtr. rewrite HT by assumption. ring.
  - rewrite fl_4_nat by exact Hb4. apply eta_term_rounded; try lia; try lra.
    + rewrite mult_INR. replace (INR 4) with 4 by (simpl; ring). exact Hb4.
    + split; [apply sqrt_pos|exact Hrt].
    + rewrite mult_INR. replace (INR 4) with 4 by (simpl; ring). pose proof (pos_INR b). lra.
Qed.

(** [Y = fl(X U)] ([_symm_lower], chunks of [symm_chunk] columns added by
    [np.add], or one [dsymm]; [X] the symmetric matrix of the stored lower
    triangle): [eY = up(up(g_n up(phi aU)) + 4 n eta rtn)],
    [phi >= ||X||_F >= || |X| ||_2], [aU >= || |U| ||_2]. *)
Theorem gr_eY_float : forall n b (X U Y : nat -> nat -> R) hY gY phi aU rt,
  (forall i l, (i < n)%nat -> (l < b)%nat -> bounded_eval hY n (pairs_of n X U i l) (Y i l)) ->
  INR hY * u <= / 2 -> gamma hY <= gY ->
  opbound n n (mabs X) phi -> opbound n b (mabs U) aU ->
  (1 <= n)%nat -> 4 * INR n <= 2 ^ 40 -> sqrt (INR n * INR b) <= rt -> 1 <= rt ->
  opbound n b (msub Y (mmul n X U))
    (succ (fl (succ (fl (gY * succ (fl (phi * aU)))) + fl (fl (fl (4 * INR n) * eta) * rt)))).
Proof.
  intros n b X U Y hY gY phi aU rt HY Hu Hg Hphi HaU Hn1 Hn4 Hrt Hrt1.
  assert (HN : opbound n b (mmul n (mabs X) (mabs U)) (phi * aU)) by (apply opbound_mul; assumption).
  apply (product_error_float n b n X U Y hY n (phi * aU)); try assumption.
  - apply step_up. lra.
  - rewrite fl_4_nat by exact Hn4. apply eta_term_rounded; try lia; try lra.
    + rewrite mult_INR. replace (INR 4) with 4 by (simpl; ring). exact Hn4.
    + split; [apply sqrt_pos|exact Hrt].
    + rewrite mult_INR. replace (INR 4) with 4 by (simpl; ring). pose proof (pos_INR n). lra.
Qed.

(** [Z = fl(V^T Y)] (row chunks of [chunk] over the [kp] padded rows, the
    rows [>= n] of [V] zero): [eZ = up(up(g_c up(aV yF)) + 4 kp eta b)],
    [aV >= || |V| ||_2], [yF >= ||Y||_F >= || |Y| ||_2]. *)
Theorem gr_eZ_float : forall n kp b (V Y Z : nat -> nat -> R) hZ gZ aV yF,
  (n <= kp)%nat -> (forall r l, (n <= r < kp)%nat -> (l < b)%nat -> V r l = 0) ->
  (forall l l', (l < b)%nat -> (l' < b)%nat -> bounded_eval hZ kp (pairs_of kp (mtr V) Y l l') (Z l l')) ->
  INR hZ * u <= / 2 -> gamma hZ <= gZ ->
  opbound n b (mabs V) aV -> opbound n b (mabs Y) yF ->
  4 * INR kp <= 2 ^ 40 -> INR (4 * kp) * INR b <= 2 ^ 40 ->
  opbound b b (msub Z (mmul n (mtr V) Y))
    (succ (fl (succ (fl (gZ * succ (fl (aV * yF)))) + fl (fl (fl (4 * INR kp) * eta) * INR b)))).
Proof.
  intros n kp b V Y Z hZ gZ aV yF Hn HV HZ Hu Hg HaV HyF Hk4 Hkb.
  assert (HN : opbound b b (mmul n (mabs (mtr V)) (mabs Y)) (aV * yF)).
  { apply opbound_mul; [|exact HyF]. apply (opbound_transpose n b (mabs V)), HaV. }
  apply (product_error_float_pad b b kp n (mtr V) Y Z hZ kp (aV * yF)); try assumption.
  - intros l l' r Hl Hl' Hr. unfold mtr. rewrite HV by assumption. ring.
  - apply step_up. lra.
  - rewrite fl_4_nat by exact Hk4. rewrite fl_nat_eta_mul.
    + rewrite sqrt_sq_nat. rewrite mult_INR. replace (INR 4) with 4 by (simpl; ring).
      pose proof (pos_INR kp). pose proof (pos_INR b). pose proof eta_pos.
      assert (0 <= INR kp * eta * INR b) by (apply Rmult_le_pos; [apply Rmult_le_pos|]; lra). nra.
    + rewrite mult_INR. replace (INR 4) with 4 by (simpl; ring). exact Hk4.
    + exact Hkb.
Qed.

(** [M = fl(T Z)] (inner [b]): [eM = up(up(g_b tz) + 2 b eta b)],
    [tz >= || |T||Z| ||_2] ([_chain_norm_sq_upper]). *)
Theorem gr_eM_float : forall b (T Z M : nat -> nat -> R) hM gM tz,
  (forall l l', (l < b)%nat -> (l' < b)%nat -> bounded_eval hM b (pairs_of b T Z l l') (M l l')) ->
  INR hM * u <= / 2 -> gamma hM <= gM ->
  opbound b b (mmul b (mabs T) (mabs Z)) tz ->
  2 * INR b <= 2 ^ 40 -> INR (2 * b) * INR b <= 2 ^ 40 ->
  opbound b b (msub M (mmul b T Z))
    (succ (fl (succ (fl (gM * tz)) + fl (fl (fl (2 * INR b) * eta) * INR b)))).
Proof.
  intros b T Z M hM gM tz HM Hu Hg Htz Hb2 Hbb.
  apply (product_error_float b b b T Z M hM b tz); try assumption; [lra|].
  rewrite fl_2_nat by exact Hb2. rewrite fl_nat_eta_mul.
  - rewrite sqrt_sq_nat, mult_INR. replace (INR 2) with 2 by (simpl; ring).
    pose proof (pos_INR b). pose proof eta_pos.
    assert (0 <= INR b * eta * INR b) by (apply Rmult_le_pos; [apply Rmult_le_pos|]; lra). nra.
  - rewrite mult_INR. replace (INR 2) with 2 by (simpl; ring). exact Hb2.
  - exact Hbb.
Qed.

(** [H = fl(V M)], computed as [H^T = fl(M^T V^T)] (inner [b]):
    [eH = up(up(g_b vm) + 2 b eta rtn)], [vm >= || |V||M| ||_2]. *)
Theorem gr_eH_float : forall n b (V M Ht : nat -> nat -> R) hH gH vm rt,
  (forall l i, (l < b)%nat -> (i < n)%nat -> bounded_eval hH b (pairs_of b (mtr M) (mtr V) l i) (Ht l i)) ->
  INR hH * u <= / 2 -> gamma hH <= gH ->
  opbound n b (mmul b (mabs V) (mabs M)) vm ->
  (1 <= b)%nat -> 2 * INR b <= 2 ^ 40 -> sqrt (INR n * INR b) <= rt -> 1 <= rt ->
  opbound n b (msub (mtr Ht) (mmul b V M))
    (succ (fl (succ (fl (gH * vm)) + fl (fl (fl (2 * INR b) * eta) * rt)))).
Proof.
  intros n b V M Ht hH gH vm rt HH Hu Hg Hvm Hb1 Hb2 Hrt Hrt1.
  apply (product_error_float_tr n b b b V M Ht hH b vm gH vm); try assumption; try lra; [lia|intros; lia|].
  rewrite fl_2_nat by exact Hb2. apply eta_term_rounded; try lia; try lra.
  - rewrite mult_INR. replace (INR 2) with 2 by (simpl; ring). exact Hb2.
  - split; [apply sqrt_pos|exact Hrt].
  - rewrite mult_INR. replace (INR 2) with 2 by (simpl; ring). lra.
Qed.

From Certbound Require Import Scaling.

(** [W = fl(Y - fl(H/2))] ([np.multiply(., 0.5)] then [np.subtract]) for
    float [Y], [H]: [|W - (Y - H/2)| <= u|W| + eta/2] entrywise (the halving
    is exact unless subnormal, the subtraction of floats has no underflow
    term), so [eW = up(up(2u wF) + eta rtn)] with [wF >= ||W||_F]. *)
Theorem gr_eW_float : forall n b (Y H W : nat -> nat -> R) wF rt,
  (forall i l, (i < n)%nat -> (l < b)%nat ->
     format (Y i l) /\ format (H i l) /\ W i l = fl (Y i l - fl (H i l * / 2))) ->
  opbound n b (mabs W) wF -> sqrt (INR n * INR b) <= rt -> 1 <= rt ->
  opbound n b (msub W (msub Y (mscal (/ 2) H))) (succ (fl (succ (fl (2 * u * wF)) + fl (eta * rt)))).
Proof.
  intros n b Y H W wF rt HW HwF Hrt Hrt1. pose proof u_pos. pose proof eta_pos.
  assert (HwF0 : 0 <= wF) by (destruct HwF; assumption).
  assert (Hent : forall i l, (i < n)%nat -> (l < b)%nat ->
            Rabs (msub W (msub Y (mscal (/ 2) H)) i l - 0) <= rsum 1 (fun _ => 2 * u * Rabs (W i l)) + 0 * 0 + eta / 2).
  { intros i l Hi Hl. destruct (HW i l Hi Hl) as (HY & HH & EW). unfold msub, mscal. simpl. rewrite Rminus_0_r.
    set (h2 := fl (H i l * / 2)).
    assert (E1 : Rabs (fl (H i l * / 2) - H i l * / 2) <= eta / 2).
    { replace (/ 2) with (bpow radix2 (-1)) by (simpl; reflexivity). apply scale_error, HH. }
    assert (E2 : Rabs ((Y i l - h2) - fl (Y i l - h2)) <= u * Rabs (fl (Y i l - h2)))
      by (apply fl_sub_error_computed_u; [exact HY|apply fl_format]).
    fold h2 in EW. rewrite <- EW in E2. fold h2 in E1.
    replace (W i l - (Y i l - / 2 * H i l)) with (- ((Y i l - h2) - W i l) + - (h2 - H i l * / 2)) by ring.
    eapply Rle_trans; [apply Rabs_triang|]. rewrite !Rabs_Ropp. pose proof (Rabs_pos (W i l)). nra. }
  assert (Hn : opbound n b (msub W (msub Y (mscal (/ 2) H))) (0 + rsum 1 (fun _ => 2 * u * wF) + 0 * 0 + eta / 2 * sqrt (INR n * INR b))).
  { apply (entrywise_assembly n b _ (fun _ _ => 0) 0 1 (fun _ => 2 * u) (fun _ => W) (fun _ => wF) 0 (fun _ _ => 0) 0 (eta / 2)).
    - apply opbound_zero.
    - intros; lra.
    - intros t _. exact HwF.
    - lra.
    - intros; lra.
    - apply opbound_zero.
    - lra.
    - intros i l Hi Hl. pose proof (Hent i l Hi Hl) as E. simpl in E |- *. unfold mabs. lra. }
  apply (opbound_weaken _ _ _ _ _ Hn). simpl.
  assert (Hs : 0 <= sqrt (INR n * INR b) <= rt) by (split; [apply sqrt_pos|exact Hrt]).
  assert (HK : eta / 2 * sqrt (INR n * INR b) <= fl (eta * rt)).
  { eapply Rle_trans; [|apply fl_lower_half; nra]. nra. }
  replace (0 + (0 + 2 * u * wF) + 0 * 0 + eta / 2 * sqrt (INR n * INR b)) with (2 * u * wF + eta / 2 * sqrt (INR n * INR b)) by ring.
  apply up_add; [apply step_up; lra|exact HK].
Qed.

(** [X' = fl(X - V W^T - W V^T)] ([_syr2k_lower_minus]: [dsyr2k] with
    [alpha = -1], [beta = 1], both exact): each stored entry is one
    evaluation of the [2b + 1] pairs [(x_ij, 1)], [(v_il, -w_jl)],
    [(w_il, -v_jl)]; the matrix meant is the symmetric one of the lower
    triangle, so an entry may come from [(i, j)] or from [(j, i)]. *)
Definition syr2k_pairs (b : nat) (X V W : nat -> nat -> R) (i j : nat) : list (R * R) :=
  (X i j, 1) :: pairs_of b V (fun l j' => - W j' l) i j ++ pairs_of b W (fun l j' => - V j' l) i j.

Lemma syr2k_dot : forall b X V W i j,
  dot (syr2k_pairs b X V W i j) = msub (msub X (mmul b V (mtr W))) (mmul b W (mtr V)) i j.
Proof.
  intros. unfold syr2k_pairs, dot. simpl. rewrite map_app, lsum_app. fold (dot (pairs_of b V (fun l j' => - W j' l) i j)).
  fold (dot (pairs_of b W (fun l j' => - V j' l) i j)). rewrite !dot_pairs_of. unfold msub, mmul, mtr.
  rewrite (rsum_ext b (fun l => V i l * - W j l) (fun l => -1 * (V i l * W j l))) by (intros; ring).
  rewrite (rsum_ext b (fun l => W i l * - V j l) (fun l => -1 * (W i l * V j l))) by (intros; ring).
  rewrite !rsum_scal. ring.
Qed.

Lemma syr2k_absdot : forall b X V W i j,
  absdot (syr2k_pairs b X V W i j) = mabs X i j + mmul b (mabs V) (mtr (mabs W)) i j + mmul b (mabs W) (mtr (mabs V)) i j.
Proof.
  intros. unfold syr2k_pairs, absdot. simpl. rewrite map_app, lsum_app.
  fold (absdot (pairs_of b V (fun l j' => - W j' l) i j)). fold (absdot (pairs_of b W (fun l j' => - V j' l) i j)).
  rewrite !absdot_pairs_of. unfold mabs, mmul, mtr. rewrite Rabs_R1, Rmult_1_r.
  rewrite (rsum_ext b (fun l => Rabs (V i l) * Rabs (- W j l)) (fun l => Rabs (V i l) * Rabs (W j l)))
    by (intros; rewrite Rabs_Ropp; reflexivity).
  rewrite (rsum_ext b (fun l => Rabs (W i l) * Rabs (- V j l)) (fun l => Rabs (W i l) * Rabs (V j l)))
    by (intros; rewrite Rabs_Ropp; reflexivity). ring.
Qed.

(** [e5 = up(up(g_5 up(phi + up(2 up(aV wF)))) + (4b + 2) eta n)]. *)
Theorem gr_e5_float : forall n b (X V W Xp : nat -> nat -> R) h5 g5 phi aV wF,
  (forall i j, X i j = X j i) ->
  (forall i j, (i < n)%nat -> (j < n)%nat ->
     bounded_eval h5 (2 * b + 1) (syr2k_pairs b X V W i j) (Xp i j) \/
     bounded_eval h5 (2 * b + 1) (syr2k_pairs b X V W j i) (Xp i j)) ->
  INR h5 * u <= / 2 -> gamma h5 <= g5 ->
  opbound n n (mabs X) phi -> opbound n b (mabs V) aV -> opbound n b (mabs W) wF ->
  4 * INR b + 2 <= 2 ^ 40 -> (4 * INR b + 2) * INR n <= 2 ^ 40 ->
  opbound n n (msub Xp (msub (msub X (mmul b V (mtr W))) (mmul b W (mtr V))))
    (succ (fl (succ (fl (g5 * succ (fl (phi + succ (fl (2 * succ (fl (aV * wF))))))))
               + fl (fl (fl (fl (4 * INR b) + 2) * eta) * INR n)))).
Proof.
  intros n b X V W Xp h5 g5 phi aV wF HXs HXp Hu Hg Hphi HaV HwF Hb Hbn.
  pose proof u_pos. pose proof eta_pos.
  set (Ex := msub (msub X (mmul b V (mtr W))) (mmul b W (mtr V))).
  set (Nabs := fun i j => mabs X i j + mmul b (mabs V) (mtr (mabs W)) i j + mmul b (mabs W) (mtr (mabs V)) i j).
  assert (Hsym : forall i j, Ex j i = Ex i j /\ Nabs j i = Nabs i j).
  { intros i j. unfold Ex, Nabs, msub, mmul, mtr, mabs. rewrite (HXs j i). split.
    - rewrite (rsum_ext b (fun l => V j l * W i l) (fun l => W i l * V j l)) by (intros; ring).
      rewrite (rsum_ext b (fun l => W j l * V i l) (fun l => V i l * W j l)) by (intros; ring). ring.
    - rewrite (rsum_ext b (fun l => Rabs (V j l) * Rabs (W i l)) (fun l => Rabs (W i l) * Rabs (V j l))) by (intros; ring).
      rewrite (rsum_ext b (fun l => Rabs (W j l) * Rabs (V i l)) (fun l => Rabs (V i l) * Rabs (W j l))) by (intros; ring).
      ring. }
  assert (Hent1 : forall i j x, bounded_eval h5 (2 * b + 1) (syr2k_pairs b X V W i j) x ->
            Rabs (x - Ex i j) <= gamma h5 * Nabs i j + INR (2 * b + 1) * eta).
  { intros i j x (t & -> & P & Hh & Hc). unfold Ex, Nabs. rewrite <- syr2k_dot, <- syr2k_absdot.
    unfold dot, absdot. rewrite <- (lsum_perm _ _ (Permutation_map _ P)),
      <- (lsum_perm _ _ (Permutation_map (fun p => Rabs (fst p) * Rabs (snd p)) P)).
    fold (dot (dpairs t)) (absdot (dpairs t)). rewrite <- dval_pairs, <- dabs_pairs.
    apply bounded_entry_error; [exact Hh| |exact Hu]. rewrite (nzcount_perm _ _ P). exact Hc. }
  assert (HN : opbound n n Nabs (phi + 2 * (aV * wF))).
  { replace (phi + 2 * (aV * wF)) with (phi + aV * wF + wF * aV) by ring.
    apply opbound_add; [apply opbound_add|].
    - exact Hphi.
    - apply opbound_mul; [exact HaV|apply (opbound_transpose n b (mabs W)), HwF].
    - apply opbound_mul; [exact HwF|apply (opbound_transpose n b (mabs V)), HaV]. }
  assert (Hn : opbound n n (msub Xp Ex) (0 + rsum 0 (fun t => 0 * 0) + gamma h5 * (phi + 2 * (aV * wF))
                                         + INR (2 * b + 1) * eta * sqrt (INR n * INR n))).
  { apply (entrywise_assembly n n (msub Xp Ex) (fun _ _ => 0) 0 0 (fun _ => 0) (fun _ _ _ => 0) (fun _ => 0)
      (gamma h5) Nabs (phi + 2 * (aV * wF)) (INR (2 * b + 1) * eta)).
    - apply opbound_zero.
    - intros; lia.
    - intros; lia.
    - apply gamma_nonneg; lra.
    - intros i j _ _. unfold Nabs, mabs, mmul, mtr.
      assert (0 <= rsum b (fun l => Rabs (V i l) * Rabs (W j l))) by (apply rsum_nonneg; intros; apply Rmult_le_pos; apply Rabs_pos).
      assert (0 <= rsum b (fun l => Rabs (W i l) * Rabs (V j l))) by (apply rsum_nonneg; intros; apply Rmult_le_pos; apply Rabs_pos).
      pose proof (Rabs_pos (X i j)). lra.
    - exact HN.
    - apply Rmult_le_pos; [apply pos_INR|lra].
    - intros i j Hi Hj. simpl. rewrite Rminus_0_r, Rplus_0_l. unfold msub at 1.
      destruct (HXp i j Hi Hj) as [Hb1|Hb2].
      + apply Hent1, Hb1.
      + destruct (Hsym i j) as [E1 E2]. rewrite <- E1, <- E2. apply Hent1, Hb2. }
  apply (opbound_weaken _ _ _ _ _ Hn). change (rsum 0 (fun t => 0 * 0)) with 0. rewrite sqrt_sq_nat.
  assert (HphiN : 0 <= phi) by (destruct Hphi; assumption).
  assert (HaV0 : 0 <= aV) by (destruct HaV; assumption). assert (HwF0 : 0 <= wF) by (destruct HwF; assumption).
  assert (Hg0 : 0 <= gamma h5) by (apply gamma_nonneg; lra).
  assert (E4 : fl (fl (4 * INR b) + 2) = INR (4 * b + 2)).
  { rewrite fl_4_nat by lra. replace 2 with (INR 2) at 1 by (simpl; ring). rewrite <- (plus_INR (4 * b) 2).
    apply fl_exact, format_nat. rewrite plus_INR, mult_INR. replace (INR 4) with 4 by (simpl; ring).
    replace (INR 2) with 2 by (simpl; ring). exact Hb. }
  rewrite E4, fl_nat_eta_mul.
  - apply Rle_trans with (gamma h5 * (phi + 2 * (aV * wF)) + INR (2 * b + 1) * eta * INR n).
    { right. ring. }
    apply up_add.
    + apply up_mul; [lra|]. split; [nra|]. apply up_add; [lra|]. apply up_mul; [lra|]. split; [nra|]. apply step_up; lra.
    + rewrite !plus_INR, !mult_INR. replace (INR 4) with 4 by (simpl; ring). replace (INR 2) with 2 by (simpl; ring).
      replace (INR 1) with 1 by reflexivity. pose proof (pos_INR b). pose proof (pos_INR n).
      assert (0 <= INR b * eta * INR n) by (apply Rmult_le_pos; [apply Rmult_le_pos|]; lra).
      assert (0 <= eta * INR n) by (apply Rmult_le_pos; lra). nra.
  - rewrite plus_INR, mult_INR. replace (INR 4) with 4 by (simpl; ring). replace (INR 2) with 2 by (simpl; ring). exact Hb.
  - rewrite plus_INR, mult_INR. replace (INR 4) with 4 by (simpl; ring). replace (INR 2) with 2 by (simpl; ring). exact Hbn.
Qed.

(** ** One block: the code's [delta_j] bounds [D_j], from the evaluation model

    [gr_delta_code] is [_bounds]' [delta] from the per-block floats
    ([TheoremGR.gr_delta_float]'s right-hand side). *)
Definition gr_delta_code (e5f nuf t2 xif epsf eUf eYf eZf eMf eHf eWf : R) : R :=
  let hq := succ (fl (/ 2 * succ (fl (1 + succ (fl (sqrt (succ (fl (1 + epsf))))))))) in
  let dYf := succ (fl (eYf + succ (fl (xif * eUf)))) in
  let inner := succ (fl (succ (fl (succ (fl (hq * dYf)) + succ (fl (/ 2 * succ (fl (nuf * succ (fl (succ (fl (t2 * eZf)) + eMf))))))))
                         + succ (fl (succ (fl (/ 2 * eHf)) + eWf)))) in
  succ (fl (e5f + succ (fl (2 * succ (fl (nuf * inner)))))).

(** Block [j] on the whole [k x k] iterate ([k = s + n]): the code's floats
    [U, Y, Z, M, H, W, X'] computed by ANY evaluation of each entry (the
    heights [h_*] with [gamma h_* <= g_*], the code's [_gamma_up] of
    [_chunked_length]), the helpers' norm floats ([vt], [aU], [aV], [tz],
    [vm], [phi], [yF], [wF]), Lemma R.1's [nu], [t2], [eps] and Lemma R.4's
    [xi]: [||X_new - Q_j X Q_j^T||_2 <= delta_j] with [delta_j] as
    [_bounds] computes it from [eU], [eY] ([_static_bounds]) and [eZ], [eM],
    [eH], [eW], [e5]. *)
Theorem gr_block_float : forall s n b bp kp (V T X Ut Y Z M Ht W Xp : nat -> nat -> R)
    hU hY hZ hM hH h5 gU gY gZ gb g5 vt aU aV tz vm phi yF wF nuf t2 xif epsf rt,
  (forall l, V O l = 0) -> (forall r l, (n <= r < kp)%nat -> (l < b)%nat -> V r l = 0) ->
  (forall l l', (l < b)%nat -> (b <= l' < bp)%nat -> T l l' = 0) ->
  (forall a d, (a < s)%nat -> (s < d)%nat -> X a d = 0) ->
  (forall a d, (a < s)%nat -> (s < d)%nat -> X d a = 0) ->
  (forall i j, X i j = X j i) ->
  let Xt := fun c d => X (s + c)%nat (s + d)%nat in
  let Qn := msub idm (mmul b (mmul b V T) (mtr V)) in
  (forall l i, (l < b)%nat -> (i < n)%nat -> bounded_eval hU b (pairs_of bp T (mtr V) l i) (Ut l i)) ->
  (forall i l, (i < n)%nat -> (l < b)%nat -> bounded_eval hY n (pairs_of n Xt (mtr Ut) i l) (Y i l)) ->
  (forall l l', (l < b)%nat -> (l' < b)%nat -> bounded_eval hZ kp (pairs_of kp (mtr V) Y l l') (Z l l')) ->
  (forall l l', (l < b)%nat -> (l' < b)%nat -> bounded_eval hM b (pairs_of b T Z l l') (M l l')) ->
  (forall l i, (l < b)%nat -> (i < n)%nat -> bounded_eval hH b (pairs_of b (mtr M) (mtr V) l i) (Ht l i)) ->
  (forall i l, (i < n)%nat -> (l < b)%nat ->
     format (Y i l) /\ format (Ht l i) /\ W i l = fl (Y i l - fl (Ht l i * / 2))) ->
  (forall i j, (i < n)%nat -> (j < n)%nat ->
     bounded_eval h5 (2 * b + 1) (syr2k_pairs b Xt V W i j) (Xp i j) \/
     bounded_eval h5 (2 * b + 1) (syr2k_pairs b Xt V W j i) (Xp i j)) ->
  INR hU * u <= / 2 -> gamma hU <= gU -> INR hY * u <= / 2 -> gamma hY <= gY ->
  INR hZ * u <= / 2 -> gamma hZ <= gZ -> INR hM * u <= / 2 -> gamma hM <= gb ->
  INR hH * u <= / 2 -> gamma hH <= gb -> INR h5 * u <= / 2 -> gamma h5 <= g5 ->
  opbound n b (mmul b (mabs V) (mabs (mtr T))) vt -> opbound n b (mabs (mtr Ut)) aU -> opbound n b (mabs V) aV ->
  opbound b b (mmul b (mabs T) (mabs Z)) tz -> opbound n b (mmul b (mabs V) (mabs M)) vm ->
  opbound n n (mabs Xt) phi -> opbound n b (mabs Y) yF -> opbound n b (mabs W) wF ->
  opbound n b V nuf -> opbound b b T t2 -> opbound n n Xt xif ->
  opbound n n (fun a c => mmul n (mtr Qn) Qn a c - idm a c) epsf -> 0 <= epsf ->
  (1 <= b)%nat -> (1 <= n)%nat -> (b <= bp)%nat -> (n <= kp)%nat ->
  4 * INR b + 2 <= 2 ^ 40 -> 4 * INR n <= 2 ^ 40 -> 4 * INR kp <= 2 ^ 40 -> INR (4 * kp) * INR b <= 2 ^ 40 ->
  INR (2 * b) * INR b <= 2 ^ 40 -> (4 * INR b + 2) * INR n <= 2 ^ 40 ->
  sqrt (INR n * INR b) <= rt -> 1 <= rt ->
  let eUf := succ (fl (succ (fl (gU * vt)) + fl (fl (fl (4 * INR b) * eta) * rt))) in
  let eYf := succ (fl (succ (fl (gY * succ (fl (phi * aU)))) + fl (fl (fl (4 * INR n) * eta) * rt))) in
  let eZf := succ (fl (succ (fl (gZ * succ (fl (aV * yF)))) + fl (fl (fl (4 * INR kp) * eta) * INR b))) in
  let eMf := succ (fl (succ (fl (gb * tz)) + fl (fl (fl (2 * INR b) * eta) * INR b))) in
  let eHf := succ (fl (succ (fl (gb * vm)) + fl (fl (fl (2 * INR b) * eta) * rt))) in
  let eWf := succ (fl (succ (fl (2 * u * wF)) + fl (eta * rt))) in
  let e5f := succ (fl (succ (fl (g5 * succ (fl (phi + succ (fl (2 * succ (fl (aV * wF))))))))
                       + fl (fl (fl (fl (4 * INR b) + 2) * eta) * INR n))) in
  opbound (s + n) (s + n)
    (fun a c => xnew s X Xp a c
                - mmul (s + n) (mmul (s + n) (fun a0 c0 => idm a0 c0 - mmul b (mmul b (vbar s V) T) (mtr (vbar s V)) a0 c0) X)
                    (mtr (fun a0 c0 => idm a0 c0 - mmul b (mmul b (vbar s V) T) (mtr (vbar s V)) a0 c0)) a c)
    (gr_delta_code e5f nuf t2 xif epsf eUf eYf eZf eMf eHf eWf).
Proof.
  intros s n b bp kp V T X Ut Y Z M Ht W Xp hU hY hZ hM hH h5 gU gY gZ gb g5 vt aU aV tz vm phi yF wF nuf t2 xif epsf rt
    HV0 HVp HTp HX1 HX2 HXs Xt Qn HU HY HZ HM HH HW H5 HuU HgU HuY HgY HuZ HgZ HuM HgM HuH HgH Hu5 Hg5
    Hvt HaU HaV Htz Hvm Hphi HyF HwF Hnu Ht2 Hxi Heps Heps0 Hb1 Hn1 Hbp Hkp Hb Hn Hk Hkb Hbb Hbn Hrt Hrt1
    eUf eYf eZf eMf eHf eWf e5f.
  pose proof (pos_INR b) as Hb0.
  assert (Hb4 : 4 * INR b <= 2 ^ 40) by lra. assert (Hb2 : 2 * INR b <= 2 ^ 40) by lra.
  assert (EU : opbound n b (msub (mtr Ut) (mmul b V (mtr T))) eUf)
    by (apply (gr_eU_float n b bp V T Ut hU gU vt rt); assumption).
  assert (EY : opbound n b (msub Y (mmul n Xt (mtr Ut))) eYf)
    by (apply (gr_eY_float n b Xt (mtr Ut) Y hY gY phi aU rt); assumption).
  assert (EZ : opbound b b (msub Z (mmul n (mtr V) Y)) eZf)
    by (apply (gr_eZ_float n kp b V Y Z hZ gZ aV yF); assumption).
  assert (EM : opbound b b (msub M (mmul b T Z)) eMf)
    by (apply (gr_eM_float b T Z M hM gb tz); assumption).
  assert (EH : opbound n b (msub (mtr Ht) (mmul b V M)) eHf)
    by (apply (gr_eH_float n b V M Ht hH gb vm rt); assumption).
  assert (EW : opbound n b (msub W (msub Y (mscal (/ 2) (mtr Ht)))) eWf)
    by (apply (gr_eW_float n b Y (mtr Ht) W wF rt); [|assumption..]; intros i l Hi Hl; exact (HW i l Hi Hl)).
  assert (E5 : opbound n n (msub Xp (msub (msub Xt (mmul b V (mtr W))) (mmul b W (mtr V)))) e5f)
    by (apply (gr_e5_float n b Xt V W Xp h5 g5 phi aV wF); try assumption; intros i j; apply HXs).
  pose proof (gr_block_bound s n b V T X Xp (mtr Ut) Y Z M (mtr Ht) W nuf t2 xif epsf eUf eYf eZf eMf eHf eWf e5f
                HV0 HX1 HX2 HXs Hnu Ht2 Hxi Heps Heps0 EU EY EZ EM EH EW E5) as HB.
  apply (opbound_weaken _ _ _ _ _ HB). unfold gr_delta_code.
  destruct EU as [HU0 _], EY as [HY0 _], EZ as [HZ0 _], EM as [HM0 _], EH as [HH0 _], EW as [HW0 _], E5 as [H50 _].
  destruct Hnu as [Hnu0 _], Ht2 as [Ht0 _], Hxi as [Hxi0 _].
  apply (gr_delta_float e5f nuf t2 xif epsf eUf eYf eZf eMf eHf eWf); lra.
Qed.

From Certbound Require Import FastCertificate MatvecChain.

(** ** [_chain_norm_sq_upper] for two factors ([vt], [tz], [vm])

    [N = F1 F2] with nonnegative [F1] ([m x p]), [F2] ([p x q]); the code's
    chain [v1 = _inflate(F2 1, q)], [v2 = _inflate(F1 v1, p)],
    [v3 = _inflate(F1^T v2, m)], [v4 = _inflate(F2^T v3, p)], each entry
    ANY evaluation of its dot product: [v4 >= N^T N 1] (Lemma 2.2 with
    monotonicity, [Lemma112.mv_entry_upper]) and Lemma G.2 with [x = 1] on
    the symmetric nonnegative [N^T N] give [||N||_2 <= sqrt(max v4)]. *)
(** One entry of [_inflate(fl(M v), n)], the pairs of its dot product in
    either orientation ([np.matmul(F, v)] or [np.matmul(v, F^T)]). *)
Definition mv_eval (n : nat) (M : nat -> nat -> R) (v : nat -> R) (i : nat) (x : R) : Prop :=
  exists t, x = inflate n (dfl t) /\
    (Permutation (dpairs t) (map (fun l => (M i l, v l)) (seq 0 n)) \/
     Permutation (dpairs t) (map (fun l => (v l, M i l)) (seq 0 n))).

Lemma mv_eval_upper : forall n M v V i x, mv_eval n M v i x ->
  (forall l, (l < n)%nat -> 0 <= M i l /\ 0 <= V l <= v l) -> (1 <= n)%nat -> INR n <= 2 ^ 40 ->
  0 <= mv n M V i <= x.
Proof.
  intros n M v V i x (t & -> & [P|P]) H Hn Hn40; (split; [unfold mv; apply rsum_nonneg; intros l Hl;
    destruct (H l Hl) as [H1 [H2 _]]; apply Rmult_le_pos; assumption|]).
  - apply (mv_entry_upper n M v V i t P H Hn Hn40).
  - destruct (dswap_mirror t) as [E1 E2]. rewrite <- E1.
    apply (mv_entry_upper n M v V i (dswap t)); [|exact H|exact Hn|exact Hn40].
    rewrite E2. apply (Permutation_map (fun p => (snd p, fst p))) in P. rewrite map_map in P. simpl in P. exact P.
Qed.

Theorem chain2_norm_upper : forall m p q (F1 F2 : nat -> nat -> R) (v1 v2 v3 v4 : nat -> R) r,
  (1 <= m)%nat -> (1 <= p)%nat -> (1 <= q)%nat -> INR m <= 2 ^ 40 -> INR p <= 2 ^ 40 -> INR q <= 2 ^ 40 ->
  (forall i j, 0 <= F1 i j) -> (forall i j, 0 <= F2 i j) ->
  (forall i, (i < p)%nat -> mv_eval q F2 (fun _ => 1) i (v1 i)) ->
  (forall i, (i < m)%nat -> mv_eval p F1 v1 i (v2 i)) ->
  (forall i, (i < p)%nat -> mv_eval m (mtr F1) v2 i (v3 i)) ->
  (forall i, (i < q)%nat -> mv_eval p (mtr F2) v3 i (v4 i)) ->
  (forall i, (i < q)%nat -> v4 i <= r) ->
  opbound m q (mmul p F1 F2) (sqrt r).
Proof.
  intros m p q F1 F2 v1 v2 v3 v4 r Hm Hp Hq Hm4 Hp4 Hq4 HF1 HF2 H1 H2 H3 H4 Hr.
  set (e1 := fun i => mv q F2 (fun _ => 1) i). set (e2 := fun i => mv p F1 e1 i).
  set (e3 := fun i => mv m (mtr F1) e2 i). set (e4 := fun i => mv p (mtr F2) e3 i).
  assert (S1 : forall i, (i < p)%nat -> 0 <= e1 i <= v1 i).
  { intros i Hi. apply (mv_eval_upper q F2 (fun _ => 1)); [apply H1, Hi| |assumption..]. intros; split; [apply HF2|lra]. }
  assert (S2 : forall i, (i < m)%nat -> 0 <= e2 i <= v2 i).
  { intros i Hi. apply (mv_eval_upper p F1 v1); [apply H2, Hi| |assumption..]. intros l Hl; split; [apply HF1|apply S1, Hl]. }
  assert (S3 : forall i, (i < p)%nat -> 0 <= e3 i <= v3 i).
  { intros i Hi. apply (mv_eval_upper m (mtr F1) v2); [apply H3, Hi| |assumption..].
    intros l Hl; split; [apply HF1|apply S2, Hl]. }
  assert (S4 : forall i, (i < q)%nat -> 0 <= e4 i <= v4 i).
  { intros i Hi. apply (mv_eval_upper p (mtr F2) v3); [apply H4, Hi| |assumption..].
    intros l Hl; split; [apply HF2|apply S3, Hl]. }
  set (N := mmul p F1 F2).
  assert (Hr0 : 0 <= r) by (destruct (S4 O ltac:(lia)); specialize (Hr O ltac:(lia)); lra).
  apply gram_opbound_sqrt.
  apply (collatz_wielandt q (mmul m (mtr N) N) (fun _ => 1) r).
  - intros i j _ _. unfold mmul, mtr. apply rsum_ext. intros; ring.
  - intros i j _ _. unfold mmul, mtr, N. apply rsum_nonneg. intros l _.
    apply Rmult_le_pos; apply rsum_nonneg; intros; apply Rmult_le_pos; auto.
  - intros; lra.
  - exact Hr0.
  - intros i Hi. rewrite Rmult_1_r. eapply Rle_trans; [|apply Hr, Hi].
    eapply Rle_trans; [|apply (S4 i Hi)]. right. fold (mv q (mmul m (mtr N) N) (fun _ => 1) i).
    rewrite mv_mmul. transitivity (mv m (mmul p (mtr F2) (mtr F1)) e2 i).
    + apply mv_ext; [intros j _; unfold N; apply mtr_mmul|]. intros j _. unfold N, e2, e1. apply mv_mmul.
    + rewrite mv_mmul. reflexivity.
Qed.

(** The code's float [_sqrt_up(_chain_norm_sq_upper(.))]: [r = max v4] is
    exact, one rounded square root, one step up. *)
Corollary chain2_norm_upper_float : forall m p q (F1 F2 : nat -> nat -> R) (v1 v2 v3 v4 : nat -> R) r,
  (1 <= m)%nat -> (1 <= p)%nat -> (1 <= q)%nat -> INR m <= 2 ^ 40 -> INR p <= 2 ^ 40 -> INR q <= 2 ^ 40 ->
  (forall i j, 0 <= F1 i j) -> (forall i j, 0 <= F2 i j) ->
  (forall i, (i < p)%nat -> mv_eval q F2 (fun _ => 1) i (v1 i)) ->
  (forall i, (i < m)%nat -> mv_eval p F1 v1 i (v2 i)) ->
  (forall i, (i < p)%nat -> mv_eval m (mtr F1) v2 i (v3 i)) ->
  (forall i, (i < q)%nat -> mv_eval p (mtr F2) v3 i (v4 i)) ->
  (forall i, (i < q)%nat -> v4 i <= r) ->
  opbound m q (mmul p F1 F2) (succ (fl (sqrt r))).
Proof.
  intros. apply (opbound_weaken _ _ _ (sqrt r)); [apply (chain2_norm_upper m p q F1 F2 v1 v2 v3 v4 r); assumption|].
  apply step_up. lra.
Qed.

(** The stacks pad rows with zeros ([kp >= n] rows of [|V_j|]): a bound
    for the padded matrix bounds the matrix of its first [n] rows. *)
Lemma opbound_rows_prefix : forall n kp q (A Ap : nat -> nat -> R) c, (n <= kp)%nat ->
  (forall i j, (i < n)%nat -> (j < q)%nat -> A i j = Ap i j) -> opbound kp q Ap c -> opbound n q A c.
Proof.
  intros n kp q A Ap c Hn HA [Hc H]. split; [exact Hc|]. intros y. eapply Rle_trans; [|apply H].
  replace kp with (n + (kp - n))%nat by lia. unfold nsq. rewrite rsum_split.
  assert (0 <= rsum (kp - n) (fun c0 => mv q Ap y (n + c0)%nat * mv q Ap y (n + c0)%nat))
    by (apply rsum_nonneg; intros; apply Rle_0_sqr).
  rewrite (rsum_ext n (fun j => mv q A y j * mv q A y j) (fun j => mv q Ap y j * mv q Ap y j)); [lra|].
  intros i Hi. rewrite (mv_ext q A Ap y y i); [reflexivity| |reflexivity]. intros j Hj. apply HA; assumption.
Qed.

(** ** [_abs_norm_sq_upper] ([aV], [aU]): Lemma G.2 on [N = |A|^T |A|]
    with [x = 1] and one power step [x = z1]

    [y1 = _inflate(sum_l |A|_rl, b)] (a numpy sum, any tree),
    [z1 = _inflate(|A|^T y1, rows)], [y2 = _inflate(|A| z1, b)],
    [z2 = _inflate(|A|^T y2, rows)] (each entry any evaluation);
    [r1 = max z1], [r2 = up(up(q + eta)/(1 - u))] with [q = max fl(z2/z1)]:
    [|| |A| ||_2^2 <= r1] and [<= r2] ([z1 > 0]: [_inflate] of a
    nonnegative float is positive). *)
Definition sum_eval (n : nat) (x : nat -> R) (y : R) : Prop :=
  exists t, y = inflate n (sfl t) /\ Permutation (sleaves t) (map x (seq 0 n)).

From Certbound Require Import SandwichChain.

(** The quotient's rounding: [x <= (fl x + eta/2)/(1 - u)] for [x >= 0]. *)
Lemma quot_upper : forall x q, 0 <= x -> fl x <= q -> x <= succ (fl (succ (fl (q + eta)) / (1 - u))).
Proof.
  intros x q Hx Hq. pose proof u_pos. pose proof u_small. pose proof eta_pos.
  assert (Hu1 : 0 < 1 - u) by (simpl in *; lra).
  assert (Hfl0 : 0 <= fl x) by (apply fl_nonneg, Hx).
  assert (Hx1 : x <= (q + eta) / (1 - u)).
  { destruct (standard_model x) as (d & e & Hd & He & Hde & Hf).
    apply Rmult_le_reg_r with (1 - u); [exact Hu1|]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l, Rmult_1_r by lra.
    apply Rabs_le_inv in Hd. apply Rabs_le_inv in He.
    apply Rmult_integral in Hde as [ -> | -> ]; rewrite Hf in Hq, Hfl0; nra. }
  eapply Rle_trans; [exact Hx1|]. apply up_div; [|lra]. split; [lra|]. apply step_up. lra.
Qed.

Lemma sum_eval_upper : forall n x y, sum_eval n x y -> (forall l, (l < n)%nat -> format (x l) /\ 0 <= x l) ->
  (1 <= n)%nat -> INR n <= 2 ^ 40 -> 0 <= rsum n x <= y.
Proof.
  intros n x y (t & -> & P) H Hn Hn40. split; [apply rsum_nonneg; intros l Hl; apply H, Hl|].
  apply (sum_entry_upper n x t P H Hn Hn40).
Qed.

Lemma mv_eval_pos : forall n M v i x, mv_eval n M v i x ->
  (forall l, (l < n)%nat -> 0 <= M i l /\ 0 <= v l) -> INR n <= 2 ^ 40 -> 0 < x.
Proof.
  intros n M v i x (t & -> & P) H Hn. apply inflate_pos; [|exact Hn]. apply dfl_nonneg.
  apply Forall_forall. intros pr Hin. destruct P as [P|P]; apply (Permutation_in _ P), in_map_iff in Hin as (l & <- & Hl);
    apply in_seq0 in Hl; destruct (H l Hl); simpl; lra.
Qed.

Theorem abs_norm_sq_upper : forall rows b (A : nat -> nat -> R) (y1 z1 y2 z2 : nat -> R) r1 q,
  (1 <= rows)%nat -> (1 <= b)%nat -> INR rows <= 2 ^ 40 -> INR b <= 2 ^ 40 ->
  (forall i j, format (A i j)) ->
  (forall i, (i < rows)%nat -> sum_eval b (fun l => Rabs (A i l)) (y1 i)) ->
  (forall l, (l < b)%nat -> mv_eval rows (mtr (mabs A)) y1 l (z1 l)) ->
  (forall l, (l < b)%nat -> z1 l <= r1) ->
  (forall i, (i < rows)%nat -> mv_eval b (mabs A) z1 i (y2 i)) ->
  (forall l, (l < b)%nat -> mv_eval rows (mtr (mabs A)) y2 l (z2 l)) ->
  (forall l, (l < b)%nat -> fl (z2 l / z1 l) <= q) ->
  opbound rows b (mabs A) (sqrt r1) /\
  opbound rows b (mabs A) (sqrt (succ (fl (succ (fl (q + eta)) / (1 - u))))).
Proof.
  intros rows b A y1 z1 y2 z2 r1 q Hr Hb Hr4 Hb4 HA Hy1 Hz1 Hr1 Hy2 Hz2 Hq.
  set (N := mmul rows (mtr (mabs A)) (mabs A)).
  assert (HNs : forall i j, (i < b)%nat -> (j < b)%nat -> N i j = N j i)
    by (intros; unfold N, mmul, mtr; apply rsum_ext; intros; ring).
  assert (HN0 : forall i j, (i < b)%nat -> (j < b)%nat -> 0 <= N i j)
    by (intros; unfold N, mmul, mtr, mabs; apply rsum_nonneg; intros; apply Rmult_le_pos; apply Rabs_pos).
  set (e1 := fun i => rsum b (fun l => Rabs (A i l))).
  assert (S1 : forall i, (i < rows)%nat -> 0 <= e1 i <= y1 i).
  { intros i Hi. apply (sum_eval_upper b); [apply Hy1, Hi| |assumption..].
    intros l _. split; [apply generic_format_abs, HA|apply Rabs_pos]. }
  assert (S2 : forall l, (l < b)%nat -> 0 <= mv rows (mtr (mabs A)) e1 l <= z1 l).
  { intros l Hl. apply (mv_eval_upper rows (mtr (mabs A)) y1); [apply Hz1, Hl| |assumption..].
    intros i Hi. split; [apply Rabs_pos|apply S1, Hi]. }
  assert (EN1 : forall l, (l < b)%nat -> rsum b (fun j => N l j * 1) = mv rows (mtr (mabs A)) e1 l).
  { intros l Hl. fold (mv b N (fun _ => 1) l). unfold N. rewrite mv_mmul. apply mv_ext; [reflexivity|].
    intros i _. unfold mv, e1, mabs. apply rsum_ext. intros; ring. }
  split.
  - assert (Hr10 : 0 <= r1) by (destruct (S2 O ltac:(lia)); specialize (Hr1 O ltac:(lia)); lra).
    apply gram_opbound_sqrt. apply (collatz_wielandt b N (fun _ => 1) r1); try assumption.
    + intros; lra.
    + intros l Hl. rewrite EN1 by exact Hl. destruct (S2 l Hl). specialize (Hr1 l Hl). lra.
  - assert (Hz1p : forall l, (l < b)%nat -> 0 < z1 l).
    { intros l Hl. apply (mv_eval_pos rows (mtr (mabs A)) y1 l); [apply Hz1, Hl| |exact Hr4].
      intros i Hi. split; [apply Rabs_pos|destruct (S1 i Hi); lra]. }
    set (r2 := succ (fl (succ (fl (q + eta)) / (1 - u)))).
    assert (S3 : forall i, (i < rows)%nat -> 0 <= mv b (mabs A) z1 i <= y2 i).
    { intros i Hi. apply (mv_eval_upper b (mabs A) z1); [apply Hy2, Hi| |assumption..].
      intros l Hl. pose proof (Hz1p l Hl). split; [apply Rabs_pos|lra]. }
    assert (S4 : forall l, (l < b)%nat -> 0 <= mv rows (mtr (mabs A)) (mv b (mabs A) z1) l <= z2 l).
    { intros l Hl. apply (mv_eval_upper rows (mtr (mabs A)) y2); [apply Hz2, Hl| |assumption..].
      intros i Hi. split; [apply Rabs_pos|apply S3, Hi]. }
    assert (Hq2 : forall l, (l < b)%nat -> z2 l / z1 l <= r2).
    { intros l Hl. apply quot_upper; [|apply Hq, Hl]. pose proof (Hz1p l Hl). destruct (S4 l Hl).
      apply div_nonneg; lra. }
    assert (Hr20 : 0 <= r2) by (pose proof (Hq2 O ltac:(lia)); pose proof (Hz1p O ltac:(lia)); destruct (S4 O ltac:(lia));
      assert (0 <= z2 O / z1 O) by (apply div_nonneg; lra); lra).
    apply gram_opbound_sqrt. apply (collatz_wielandt b N z1 r2); try assumption.
    intros l Hl. fold (mv b N z1 l). unfold N. rewrite mv_mmul.
    destruct (S4 l Hl) as [_ H4]. pose proof (Hq2 l Hl) as H5. pose proof (Hz1p l Hl).
    apply (Rmult_le_compat_r (z1 l)) in H5; [|lra].
    replace (z2 l / z1 l * z1 l) with (z2 l) in H5 by (field; lra). lra.
Qed.

(** ** Lemma T6 as [_spectral_norm_upper_stack] evaluates it ([t2], [s2])

    [G_0 = A] ([b x b]), [G_1 = fl(G_0 G_0^T)], [G_(i+1) = fl(G_i^T G_i)]
    (each entry any evaluation of its [b] pairs), [fro2_i >= ||G_i||_F^2];
    downward [B_L = up(sqrt fro2_L)],
    [B_i = min(up(sqrt fro2_i), up(sqrt(up(up(B_(i+1) + up(g_b fro2_i)) + 2 b b eta))))]:
    [||A||_2 <= B_0].  The step: [||G_i||^2 = ||G_i^T G_i|| <= ||G_(i+1)|| +
    gamma_b || |G_i|^T|G_i| || + b eta b] and [|| |G_i|^T |G_i| || <= ||G_i||_F^2]. *)
Lemma tree_bounded_len : forall t ps n, Permutation (dpairs t) ps -> (length ps <= n)%nat -> bounded_eval n n ps (dfl t).
Proof.
  intros t ps n P Hl. apply (bounded_weaken (nzcount ps) (nzcount ps)); try (pose proof (nzcount_le ps); lia).
  apply tree_bounded, P.
Qed.

Fixpoint t6_bound (fro2 : nat -> R) (gb : R) (b L d : nat) : R :=
  match d with
  | O => succ (fl (sqrt (fro2 L)))
  | S d' => Rmin (succ (fl (sqrt (fro2 (L - S d')%nat))))
                 (succ (fl (sqrt (succ (fl (succ (fl (t6_bound fro2 gb b L d' + succ (fl (gb * fro2 (L - S d')%nat))))
                                              + 2 * INR b * INR b * eta))))))
  end.

Lemma fl_2bb_eta : forall b : nat, 2 * INR b * INR b <= 2 ^ 40 ->
  fl (fl (fl (2 * INR b) * INR b) * eta) = 2 * INR b * INR b * eta.
Proof.
  intros b H. pose proof (pos_INR b).
  assert (E2 : INR (2 * b * b) = 2 * INR b * INR b) by (rewrite !mult_INR; simpl; ring).
  rewrite fl_2_nat by nra. rewrite <- mult_INR. rewrite (fl_exact (INR (2 * b * b))) by (apply format_nat; lra).
  rewrite fl_nat_eta by lra. rewrite E2. reflexivity.
Qed.

(** One Gram squaring: [||G||_2 <= sqrt(c)] from the next level's bound. *)
Lemma t6_step : forall b (A G1 : nat -> nat -> R) F B gb,
  (1 <= b)%nat -> INR b * u <= / 2 -> gamma b <= gb ->
  (forall p q, (p < b)%nat -> (q < b)%nat -> bounded_eval b b (pairs_of b (mtr A) A p q) (G1 p q)) ->
  rsum b (fun p => rsum b (fun q => A p q * A p q)) <= F -> opbound b b G1 B ->
  opbound b b A (succ (fl (sqrt (succ (fl (succ (fl (B + succ (fl (gb * F)))) + 2 * INR b * INR b * eta)))))).
Proof.
  intros b A G1 F B gb Hb Hu Hg HG HF HB. pose proof u_pos. pose proof eta_pos.
  assert (HAF : opbound b b (mabs A) (sqrt F)).
  { apply frobenius_bound. eapply Rle_trans; [|exact HF]. right. apply rsum_ext. intros p _. apply rsum_ext. intros q _.
    unfold mabs. rewrite <- Rabs_mult. apply Rabs_pos_eq, Rle_0_sqr. }
  assert (HF0 : 0 <= F) by (eapply Rle_trans; [|exact HF]; apply rsum_nonneg; intros; apply rsum_nonneg; intros; apply Rle_0_sqr).
  assert (HN : opbound b b (mmul b (mabs (mtr A)) (mabs A)) F).
  { replace F with (sqrt F * sqrt F) by (apply sqrt_sqrt, HF0).
    apply opbound_mul; [apply (opbound_transpose b b (mabs A)), HAF|exact HAF]. }
  pose proof (product_error_opbound b b b (mtr A) A G1 b b F HG Hu HN) as HE.
  assert (HAA : opbound b b (mmul b (mtr A) A) (B + (gamma b * F + INR b * eta * sqrt (INR b * INR b)))).
  { apply (opbound_ext b b (fun p q => G1 p q + - msub G1 (mmul b (mtr A) A) p q)); [intros; unfold msub; ring|].
    apply opbound_add; [exact HB|]. replace (gamma b * F + INR b * eta * sqrt (INR b * INR b))
      with (Rabs (-1) * (gamma b * F + INR b * eta * sqrt (INR b * INR b))) by (rewrite Rabs_left by lra; ring).
    apply (opbound_ext b b (fun p q => -1 * msub G1 (mmul b (mtr A) A) p q)); [intros; ring|]. apply opbound_scal, HE. }
  apply (opbound_weaken _ _ _ _ _ (gram_opbound_sqrt b b A _ HAA)).
  apply up_sqrt. rewrite sqrt_sq_nat. destruct HB as [HB0 _].
  assert (0 <= gamma b) by (apply gamma_nonneg; lra).
  assert (gamma b * F <= succ (fl (gb * F))) by (apply up_mul; lra).
  assert (INR b * eta * INR b <= 2 * INR b * INR b * eta) by (pose proof (pos_INR b); nra).
  replace (B + (gamma b * F + INR b * eta * INR b)) with ((B + gamma b * F) + INR b * eta * INR b) by ring.
  apply up_add; [|lra]. apply up_add; lra.
Qed.

Theorem t6_spectral_norm_upper : forall b L (A : nat -> nat -> R) (G : nat -> nat -> nat -> R) (fro2 : nat -> R) gb,
  (1 <= b)%nat -> INR b * u <= / 2 -> gamma b <= gb ->
  (forall p q, G O p q = A p q) ->
  (1 <= L)%nat ->
  (forall p q, (p < b)%nat -> (q < b)%nat -> bounded_eval b b (pairs_of b A (mtr A) p q) (G 1%nat p q)) ->
  (forall i p q, (1 <= i < L)%nat -> (p < b)%nat -> (q < b)%nat ->
     bounded_eval b b (pairs_of b (mtr (G i)) (G i) p q) (G (S i) p q)) ->
  (forall i, (i <= L)%nat -> rsum b (fun p => rsum b (fun q => G i p q * G i p q)) <= fro2 i) ->
  opbound b b A (t6_bound fro2 gb b L L).
Proof.
  intros b L A G fro2 gb Hb Hu Hg HG0 HL HG1 HGs HF.
  assert (Hfrob : forall i, (i <= L)%nat -> opbound b b (G i) (succ (fl (sqrt (fro2 i))))).
  { intros i Hi. apply (opbound_weaken _ _ _ (sqrt (fro2 i))); [apply frobenius_bound, HF, Hi|]. apply step_up; lra. }
  assert (H : forall d, (d <= L)%nat -> opbound b b (G (L - d)%nat) (t6_bound fro2 gb b L d)).
  { induction d as [|d IH]; intros Hd; simpl t6_bound.
    - rewrite Nat.sub_0_r. apply Hfrob. lia.
    - apply opbound_min; [apply Hfrob; lia|].
      specialize (IH ltac:(lia)). replace (L - d)%nat with (S (L - S d)) in IH by lia.
      destruct (Nat.eq_dec (L - S d) 0) as [E|E].
      + (* level 0: G_1 = fl(A A^T), through A^T *)
        rewrite E in IH |- *.
        apply (opbound_ext b b (mtr (mtr (G O)))); [intros; reflexivity|].
        apply opbound_transpose.
        apply (t6_step b (mtr (G O)) (G 1%nat) (fro2 O) (t6_bound fro2 gb b L d) gb Hb Hu Hg); [|  |exact IH].
        * intros p q Hp Hq. specialize (HG1 p q Hp Hq).
          replace (pairs_of b (mtr (mtr (G O))) (mtr (G O)) p q) with (pairs_of b A (mtr A) p q); [exact HG1|].
          unfold pairs_of, mtr. apply map_ext. intros l. rewrite !HG0. reflexivity.
        * eapply Rle_trans; [|apply HF; lia]. right. unfold mtr. rewrite rsum_swap. reflexivity.
      + apply (t6_step b (G (L - S d)%nat) (G (S (L - S d))) (fro2 (L - S d)%nat) (t6_bound fro2 gb b L d) gb Hb Hu Hg);
          [| |exact IH].
        * intros p q Hp Hq. apply HGs; [lia|exact Hp|exact Hq].
        * apply HF. lia. }
  specialize (H L (le_n L)). rewrite Nat.sub_diag in H.
  apply (opbound_ext b b (G O)); [intros; apply HG0|exact H].
Qed.

(** ** Sums of squares ([_frobenius_sq_upper]: [fro2], and the loop's
    [fl(||Y||_F^2)], [fl(||W||_F^2)] then [_inflate(., kp b)]: [yF], [wF])

    Any evaluation of the dot product of the flattened entries with
    themselves, then [_inflate] with any count [K >=] the number of
    entries, bounds [||A||_F^2]. *)
Lemma dot_inflate_upper : forall ps t K, Permutation (dpairs t) ps -> Forall (fun p => 0 <= fst p /\ 0 <= snd p) ps ->
  (length ps <= K)%nat -> (1 <= K)%nat -> INR K <= 2 ^ 40 -> dot ps <= inflate K (dfl t).
Proof.
  intros ps t K P HF HK HK1 HK40. pose proof u_pos. pose proof eta_pos.
  assert (HlK : INR (length ps) <= INR K) by (apply le_INR, HK).
  assert (Hku : INR (length ps) * u <= / 4) by (apply small_k; lra).
  assert (HKu : INR K * u <= / 4) by (apply small_k; lra).
  pose proof (dot_nonneg_upper ps t P HF Hku) as Hd.
  assert (HF' : Forall (fun p => 0 <= fst p /\ 0 <= snd p) (dpairs t)).
  { rewrite Forall_forall in *. intros x Hx. apply HF. eapply Permutation_in; [exact P|exact Hx]. }
  assert (HS : 0 <= dot ps).
  { unfold dot. clear -HF. induction HF as [|p ps [H1 H2] _ IH]; simpl; [lra | nra]. }
  apply (inflate_upper K (dfl t) (dot ps) HK1 HK40 (dfl_format t) (dfl_nonneg t HF') HS).
  pose proof (gamma_mono _ _ HK ltac:(lra)) as G. nra.
Qed.

Definition sq_pairs (m q : nat) (A : nat -> nat -> R) : list (R * R) :=
  flat_map (fun i => map (fun j => (A i j, A i j)) (seq 0 q)) (seq 0 m).

Lemma sq_pairs_S : forall m q A, sq_pairs (S m) q A = sq_pairs m q A ++ map (fun j => (A m j, A m j)) (seq 0 q).
Proof. intros. unfold sq_pairs. rewrite seq_S, flat_map_app. simpl. rewrite app_nil_r. reflexivity. Qed.

Lemma sq_pairs_length : forall m q A, length (sq_pairs m q A) = (m * q)%nat.
Proof.
  induction m as [|m IH]; intros q A; [reflexivity|]. rewrite sq_pairs_S, app_length, IH, map_length, seq_length. lia.
Qed.

Theorem frob_sq_upper : forall m q (A : nat -> nat -> R) t K, Permutation (dpairs t) (sq_pairs m q A) ->
  (m * q <= K)%nat -> (1 <= K)%nat -> INR K <= 2 ^ 40 ->
  rsum m (fun i => rsum q (fun j => A i j * A i j)) <= inflate K (dfl t).
Proof.
  intros m q A t K P HK HK1 HK40.
  assert (HF : Forall (fun p => fst p = snd p) (dpairs t)).
  { apply Forall_forall. intros p Hin. eapply Permutation_in in Hin; [|exact P].
    unfold sq_pairs in Hin. apply in_flat_map in Hin as (i & _ & Hin). apply in_map_iff in Hin as (j & <- & _). reflexivity. }
  destruct (dabs_tree_squares t HF) as [E Pt]. rewrite <- E.
  set (ps := map (fun p => (Rabs (fst p), Rabs (snd p))) (sq_pairs m q A)).
  assert (Hps : Permutation (dpairs (dabs_tree t)) ps) by (rewrite Pt; apply Permutation_map, P).
  assert (Hdot : dot ps = rsum m (fun i => rsum q (fun j => A i j * A i j))).
  { unfold ps, dot. rewrite map_map. simpl. clear. induction m as [|m IH]; [reflexivity|].
    rewrite sq_pairs_S, map_app, lsum_app, IH, map_map. simpl. rewrite lsum_map_seq. simpl.
    f_equal. apply rsum_ext. intros; apply abs_sq. }
  rewrite <- Hdot. apply dot_inflate_upper; try assumption.
  - unfold ps. apply Forall_forall. intros p Hin. apply in_map_iff in Hin as (p' & <- & _). simpl.
    split; apply Rabs_pos.
  - unfold ps. rewrite map_length, sq_pairs_length. exact HK.
Qed.

(** [sqrt_up(_inflate(fl(sum a^2), K))] bounds [||A||_F >= || |A| ||_2]. *)
Corollary frob_norm_float : forall m q (A : nat -> nat -> R) t K, Permutation (dpairs t) (sq_pairs m q A) ->
  (m * q <= K)%nat -> (1 <= K)%nat -> INR K <= 2 ^ 40 ->
  opbound m q (mabs A) (succ (fl (sqrt (inflate K (dfl t))))) /\ opbound m q A (succ (fl (sqrt (inflate K (dfl t))))).
Proof.
  intros m q A t K P HK HK1 HK40. pose proof (frob_sq_upper m q A t K P HK HK1 HK40) as H.
  assert (Hm : opbound m q (mabs A) (sqrt (inflate K (dfl t)))).
  { apply frobenius_bound. eapply Rle_trans; [|exact H]. right. apply rsum_ext. intros i _. apply rsum_ext. intros j _.
    unfold mabs. apply abs_sq. }
  assert (Hm' : opbound m q (mabs A) (succ (fl (sqrt (inflate K (dfl t)))))).
  { apply (opbound_weaken _ _ _ _ _ Hm). apply step_up. lra. }
  split; [exact Hm'|apply opbound_abs, Hm'].
Qed.

(** ** Lemma R.1's [F] and [eS] as [_static_bounds] evaluates them *)

(** [F]: [P = fl(R~ T)] (inner over the [bp] slots, [R~]'s unused columns
    zero), refused unless [P_pp in [1/2, 2]] so that the in-place
    [P_pp - 1] is exact (Sterbenz); [fro2 >= ||P - I||_F^2]
    ([_frobenius_sq_upper]), [rt >= || |R~||T| ||_2]:
    [F = up(up(up(sqrt fro2) + up(g_b rt)) + 2 b b eta) >= ||R~ T - I||_2]. *)
Theorem gr_F_float : forall b bp (Rt T P : nat -> nat -> R) hP gb rt fro2,
  (b <= bp)%nat -> (forall p l, (p < b)%nat -> (b <= l < bp)%nat -> Rt p l = 0) ->
  (forall p q, (p < b)%nat -> (q < b)%nat -> bounded_eval hP b (pairs_of bp Rt T p q) (P p q)) ->
  (forall p, (p < b)%nat -> / 2 <= P p p <= 2) ->
  rsum b (fun p => rsum b (fun q => (if Nat.eq_dec p q then fl (P p p - 1) else P p q) *
                                    (if Nat.eq_dec p q then fl (P p p - 1) else P p q))) <= fro2 ->
  INR hP * u <= / 2 -> gamma hP <= gb ->
  opbound b b (mmul b (mabs Rt) (mabs T)) rt -> 2 * INR b * INR b <= 2 ^ 40 ->
  opbound b b (fun p q => mmul b Rt T p q - idm p q)
    (succ (fl (succ (fl (succ (fl (sqrt fro2)) + succ (fl (gb * rt)))) + fl (fl (fl (2 * INR b) * INR b) * eta)))).
Proof.
  intros b bp Rt T P hP gb rt fro2 Hb HRt HP Hd Hfro Hu Hg Hrt Hbb. pose proof u_pos. pose proof eta_pos.
  set (Pd := fun p q => if Nat.eq_dec p q then fl (P p p - 1) else P p q).
  assert (HPd : opbound b b Pd (sqrt fro2)) by (apply frobenius_bound, Hfro).
  assert (HE : opbound b b (msub P (mmul b Rt T)) (gamma hP * rt + INR b * eta * sqrt (INR b * INR b))).
  { apply (opbound_ext b b (msub P (mmul bp Rt T))).
    - intros p q Hp Hq. unfold msub. rewrite (mmul_pad bp b) by (try exact Hb; intros l Hl; rewrite HRt by assumption; ring).
      reflexivity.
    - apply (product_error_opbound b b bp Rt T P hP b rt HP Hu).
      apply (opbound_ext b b (mmul b (mabs Rt) (mabs T))); [|exact Hrt].
      intros p q Hp Hq. symmetry. apply mmul_pad; [exact Hb|]. intros l Hl. unfold mabs. rewrite HRt by assumption.
      rewrite Rabs_R0. ring. }
  assert (Hid : forall p q, (p < b)%nat -> (q < b)%nat -> mmul b Rt T p q - idm p q = Pd p q + - msub P (mmul b Rt T) p q).
  { intros p q Hp Hq. unfold Pd, msub, idm. destruct (Nat.eq_dec p q) as [<-|Hne].
    - destruct (HP p p Hp Hp) as (t & Et & _). rewrite gram_diagonal_shift_exact; [ring| |apply Hd, Hp].
      rewrite Et. apply dfl_format.
    - ring. }
  apply (opbound_ext b b (fun p q => Pd p q + - msub P (mmul b Rt T) p q)); [intros; symmetry; apply Hid; assumption|].
  assert (HmE : opbound b b (fun p q => - msub P (mmul b Rt T) p q) (gamma hP * rt + INR b * eta * sqrt (INR b * INR b))).
  { replace (gamma hP * rt + INR b * eta * sqrt (INR b * INR b))
      with (Rabs (-1) * (gamma hP * rt + INR b * eta * sqrt (INR b * INR b))) by (rewrite Rabs_left by lra; ring).
    apply (opbound_ext b b (fun p q => -1 * msub P (mmul b Rt T) p q)); [intros; ring|]. apply opbound_scal, HE. }
  apply (opbound_weaken _ _ _ _ _ (opbound_add b b _ _ _ _ HPd HmE)).
  rewrite fl_2bb_eta by exact Hbb. rewrite sqrt_sq_nat. destruct Hrt as [Hrt0 _].
  assert (0 <= gamma hP) by (apply gamma_nonneg; lra).
  assert (0 <= fro2) by (destruct HPd as [Hs _]; eapply Rle_trans; [|exact Hfro]; apply rsum_nonneg; intros; apply rsum_nonneg;
    intros; apply Rle_0_sqr).
  assert (INR b * eta * INR b <= 2 * INR b * INR b * eta) by (pose proof (pos_INR b); nra).
  replace (sqrt fro2 + (gamma hP * rt + INR b * eta * INR b)) with ((sqrt fro2 + gamma hP * rt) + INR b * eta * INR b) by ring.
  apply up_add; [|lra]. apply up_add; [apply step_up; lra|apply up_mul; lra].
Qed.

(** [eS]: [S0 = fl(V^T V)] (row chunks over the [kp] padded rows, the
    rows [>= n] of [V] zero), its upper triangle mirrored ([S~ := R~ + R~^T]
    is the symmetric matrix of [S0]'s upper triangle: exact,
    [halving_doubling_exact] for its diagonal), [aV >= || |V| ||_2]:
    [eS = up(up(g_s up(aV aV)) + 4 kp b eta) >= ||V^T V - S~||_2]. *)
Lemma halving_doubling_exact : forall x, format x -> bpow radix2 (-1021) <= x ->
  fl (fl (x * / 2) + fl (x * / 2)) = x.
Proof.
  intros x Hx Hb. replace (/ 2) with (bpow radix2 (-1)) by (simpl; reflexivity).
  rewrite scale_normal_exact; [| exact Hx |].
  - assert (E : bpow radix2 (-1) = / 2) by (simpl; reflexivity).
    replace (x * bpow radix2 (-1) + x * bpow radix2 (-1)) with x by (rewrite E; field). apply fl_exact, Hx.
  - rewrite Rabs_mult, (Rabs_pos_eq (bpow _ _)) by apply bpow_ge_0. pose proof (bpow_gt_0 radix2 (-1021)).
    rewrite Rabs_pos_eq by lra. replace (bpow radix2 (-1022)) with (bpow radix2 (-1021) * bpow radix2 (-1))
      by (rewrite <- bpow_plus; reflexivity).
    apply Rmult_le_compat_r; [apply bpow_ge_0|exact Hb].
Qed.

Theorem gr_eS_float : forall n kp b (V S0 St : nat -> nat -> R) hS gS aV,
  (n <= kp)%nat -> (forall r l, (n <= r < kp)%nat -> (l < b)%nat -> V r l = 0) ->
  (forall p q, (p < b)%nat -> (q < b)%nat -> (p <= q)%nat -> bounded_eval hS kp (pairs_of kp (mtr V) V p q) (S0 p q)) ->
  (forall p q, (p < b)%nat -> (q < b)%nat -> St p q = S0 (Nat.min p q) (Nat.max p q)) ->
  INR hS * u <= / 2 -> gamma hS <= gS -> opbound n b (mabs V) aV ->
  4 * INR kp <= 2 ^ 40 -> INR (4 * kp) * INR b <= 2 ^ 40 ->
  opbound b b (fun p q => mmul n (mtr V) V p q - St p q)
    (succ (fl (succ (fl (gS * succ (fl (aV * aV)))) + fl (fl (fl (4 * INR kp) * INR b) * eta)))).
Proof.
  intros n kp b V S0 St hS gS aV Hn HV HS HSt Hu Hg HaV Hk Hkb. pose proof u_pos. pose proof eta_pos.
  assert (Hpad : forall p q, (p < b)%nat -> mmul kp (mtr V) V p q = mmul n (mtr V) V p q).
  { intros p q Hp. apply mmul_pad; [exact Hn|]. intros l Hl. unfold mtr. rewrite HV by assumption. ring. }
  assert (Hpada : forall p q, (p < b)%nat -> mmul kp (mabs (mtr V)) (mabs V) p q = mmul n (mabs (mtr V)) (mabs V) p q).
  { intros p q Hp. apply mmul_pad; [exact Hn|]. intros l Hl. unfold mtr, mabs. rewrite HV by assumption.
    rewrite Rabs_R0. ring. }
  assert (Hsym : forall p q, mmul n (mtr V) V p q = mmul n (mtr V) V q p /\
                             mmul n (mabs (mtr V)) (mabs V) p q = mmul n (mabs (mtr V)) (mabs V) q p).
  { intros p q. unfold mmul, mtr, mabs. split; apply rsum_ext; intros; ring. }
  assert (Hent : forall p q, (p < b)%nat -> (q < b)%nat ->
            Rabs ((mmul n (mtr V) V p q - St p q) - 0) <=
            rsum 0 (fun t => 0 * 0) + gamma hS * mmul n (mabs (mtr V)) (mabs V) p q + INR kp * eta).
  { intros p q Hp Hq. simpl. rewrite Rminus_0_r, Rplus_0_l, HSt by assumption.
    destruct (le_lt_dec p q) as [Hpq|Hpq].
    - rewrite Nat.min_l, Nat.max_r by exact Hpq. rewrite Rabs_minus_sym, <- Hpad, <- Hpada by exact Hp.
      apply (bounded_product_entry kp (mtr V) V p q hS kp), Hu. apply HS; assumption.
    - rewrite Nat.min_r, Nat.max_l by lia. destruct (Hsym p q) as [E1 E2]. rewrite E1, E2.
      rewrite Rabs_minus_sym, <- Hpad, <- Hpada by exact Hq.
      apply (bounded_product_entry kp (mtr V) V q p hS kp), Hu. apply HS; lia. }
  assert (HN : opbound b b (mmul n (mabs (mtr V)) (mabs V)) (aV * aV)).
  { apply opbound_mul; [apply (opbound_transpose n b (mabs V)), HaV|exact HaV]. }
  pose proof (entrywise_assembly b b (fun p q => mmul n (mtr V) V p q - St p q) (fun _ _ => 0) 0 0 (fun _ => 0)
    (fun _ _ _ => 0) (fun _ => 0) (gamma hS) (mmul n (mabs (mtr V)) (mabs V)) (aV * aV) (INR kp * eta)
    (opbound_zero b b) ltac:(intros; lia) ltac:(intros; lia) ltac:(apply gamma_nonneg; lra)
    ltac:(intros; unfold mmul, mtr, mabs; apply rsum_nonneg; intros; apply Rmult_le_pos; apply Rabs_pos)
    HN ltac:(apply Rmult_le_pos; [apply pos_INR|lra]) Hent) as HB.
  apply (opbound_weaken _ _ _ _ _ HB). change (rsum 0 (fun t => 0 * 0)) with 0. rewrite sqrt_sq_nat.
  rewrite fl_4_nat by exact Hk.
  rewrite fl_nat_mul by exact Hkb.
  replace (INR (4 * kp) * INR b * eta) with (INR (4 * kp * b) * eta) by (rewrite mult_INR; ring).
  rewrite fl_nat_eta by (rewrite mult_INR; exact Hkb).
  destruct HaV as [HaV0 _]. assert (0 <= gamma hS) by (apply gamma_nonneg; lra).
  apply Rle_trans with (gamma hS * (aV * aV) + INR kp * eta * INR b); [right; ring|].
  apply up_add.
  - apply up_mul; [lra|]. split; [nra|]. apply step_up. lra.
  - rewrite !mult_INR. replace (INR 4) with 4 by (simpl; ring). pose proof (pos_INR kp). pose proof (pos_INR b).
    assert (0 <= INR kp * eta * INR b) by (apply Rmult_le_pos; [apply Rmult_le_pos|]; lra). nra.
Qed.

(** The stacks pad a block's [b_j x b_j] matrices to [b x b] (zero rows
    and columns): a bound for the padded matrix bounds its leading block
    ([t2], [s2] of the live [T_j], [S~_j] from Lemma T6 on the padded stack). *)
Lemma opbound_prefix : forall m n m' n' (A : nat -> nat -> R) c, (m <= m')%nat -> (n <= n')%nat ->
  opbound m' n' A c -> opbound m n A c.
Proof.
  intros m n m' n' A c Hm Hn [Hc H]. split; [exact Hc|]. intros y.
  set (y' := fun l => if lt_dec l n then y l else 0).
  assert (Ey : forall i, mv n' A y' i = mv n A y i).
  { intros i. unfold mv. replace n' with (n + (n' - n))%nat by lia. rewrite rsum_split.
    rewrite (rsum_ext (n' - n) _ (fun _ => 0)) by (intros l Hl; unfold y'; destruct (lt_dec (n + l) n); [lia|ring]).
    rewrite rsum_zero, Rplus_0_r. apply rsum_ext. intros l Hl. unfold y'. destruct (lt_dec l n); [reflexivity|lia]. }
  assert (Ny : nsq n' y' = nsq n y).
  { unfold nsq. replace n' with (n + (n' - n))%nat by lia. rewrite rsum_split.
    rewrite (rsum_ext (n' - n) _ (fun _ => 0)) by (intros l Hl; unfold y'; destruct (lt_dec (n + l) n); [lia|ring]).
    rewrite rsum_zero, Rplus_0_r. apply rsum_ext. intros l Hl. unfold y'. destruct (lt_dec l n); [reflexivity|lia]. }
  specialize (H y'). rewrite Ny in H. eapply Rle_trans; [|exact H].
  unfold nsq at 2. replace m' with (m + (m' - m))%nat by lia. rewrite rsum_split.
  assert (0 <= rsum (m' - m) (fun c0 => mv n' A y' (m + c0)%nat * mv n' A y' (m + c0)%nat))
    by (apply rsum_nonneg; intros; apply Rle_0_sqr).
  unfold nsq. rewrite (rsum_ext m (fun j => mv n A y j * mv n A y j) (fun j => mv n' A y' j * mv n' A y' j)); [lra|].
  intros i _. rewrite Ey. reflexivity.
Qed.
