(** * The stacked bounds of §10: Lemma 2.3 and Lemma 3.1 as [_stacked] computes them

    Backs [proofs/enclosure.md] §10 (the stacked functions evaluate the
    right-hand sides of Lemmas 2.3 and 3.1, every scalar step rounded up);
    code: [certbound/enclose/_stacked.py] ([norm2_upper]: [fro], [n1],
    [ninf], [hoelder], their minimum; [gram_deviation_upper]: the Sterbenz
    shift [G_ii - 1], [err], [out]).

    - [norm2_upper_float]: [s = fl(sum |m|^2)] one classical dot product of
      the [k = p q] entries (any order), [fro = up(sqrt(up(up(s + 2 k eta)
      inv)))] with a float [inv >= 1/(1 - gamma_k)] ([_inv_one_minus_gamma_upper],
      Arb, F6), [n1 = max _mv(|M|^T, 1)], [ninf = max _mv(|M|, 1)],
      [hoelder = up(sqrt(up(n1 ninf)))]: [min(fro, hoelder)] bounds [||M||_2]
      and [|| |M| ||_2] (Lemma 2.3 reads [|M|] only);
    - [gram_deviation_upper_float]: [G = fl(X^T X)] (any classical
      evaluation, SYRK mirrors included: [Lemma112.gram_mirror_entry]), its
      diagonal in [[1/2, 2]] so that [fl(G_ii - 1)] is exact (Sterbenz),
      [nD >= ||G - I||_2] ([norm2_upper] above), [nu >= || |X|^T|X| ||_2]
      ([Lemma112.abs_gram_norm2_upper_float]), [gu >= gamma_m]:
      [out = up(up(nD + up(gu nu)) + up(2 m r eta))] bounds [||X^T X - I||_2];
    - [residual_norm_upper_float]: [residual_norm_upper]'s [main], [apriori],
      [under] bound [||W - X diag(s) Y^T||_2].
    With these three, the premises [alU], [e], [eRR], [nL] of
    [Lemma112.certify_stack_theorem_g_sound] are machine-checked as well:
    [certify_stack_theorem_g_end_to_end] (at the end) is one slice of
    [product._certify_stack_theorem_g] from the code's computation to
    [lo_i <= sigma_i(A B^T) <= hi_i]. *)

From Coq Require Import Reals Psatz List Permutation.
From Flocq Require Import Core.
From Certbound Require Import FPModel Summation DotProduct FastCertificate MatvecChain NormBounds OneStep TheoremGFloat Lemma112.
Import ListNotations.
Open Scope R_scope.

Local Notation succ := (succ radix2 fexp).
Local Notation pred := (pred radix2 fexp).

(** All index pairs of a [p x q] matrix, row by row (numpy's C order of
    [reshape(h, 1, k)]; any other order is a permutation). *)
Definition allidx (p q : nat) : list (nat * nat) := flat_map (fun i => map (fun j => (i, j)) (seq 0 q)) (seq 0 p).

Lemma allidx_S : forall p q, allidx (S p) q = allidx p q ++ map (fun j => (p, j)) (seq 0 q).
Proof. intros p q. unfold allidx. rewrite seq_S, flat_map_app. simpl. rewrite app_nil_r. reflexivity. Qed.

Lemma lsum_allidx : forall p q (f : nat * nat -> R),
  lsum (map f (allidx p q)) = rsum p (fun i => rsum q (fun j => f (i, j))).
Proof.
  induction p as [|p IH]; intros q f; [reflexivity|].
  rewrite allidx_S, map_app, lsum_app, IH, map_map, lsum_map_seq. reflexivity.
Qed.

Lemma allidx_length : forall p q, length (allidx p q) = (p * q)%nat.
Proof.
  induction p as [|p IH]; intros q; [reflexivity|].
  rewrite allidx_S, app_length, IH, map_length, seq_length. lia.
Qed.

Lemma format_nat_eta : forall k : nat, INR k <= 2 ^ 40 -> format (2 * INR k * eta).
Proof.
  intros k Hk. apply generic_format_FLT.
  apply FLT_spec with (f := Float radix2 (2 * Z.of_nat k) (-1074)).
  - unfold F2R, eta. cbn [Fnum Fexp]. rewrite mult_IZR, <- INR_IZR_INZ. reflexivity.
  - cbn [Fnum]. unfold prec. pose proof (k_bound k Hk). apply Z.abs_lt. change (radix2 ^ 53)%Z with 9007199254740992%Z. lia.
  - simpl. unfold emin. lia.
Qed.

Theorem norm2_upper_float : forall p q (M : nat -> nat -> R) (ts : dtree) (tn1 tninf : nat -> dtree) inv n1 ninf,
  (1 <= p)%nat -> (1 <= q)%nat -> INR (p * q) <= 2 ^ 40 ->
  Permutation (dpairs ts) (map (fun x => (mabs M (fst x) (snd x), mabs M (fst x) (snd x))) (allidx p q)) ->
  / (1 - gamma (p * q)) <= inv ->
  (forall j, (j < q)%nat -> Permutation (dpairs (tn1 j)) (map (fun i => (mtr (mabs M) j i, 1)) (seq 0 p))) ->
  (forall i, (i < p)%nat -> Permutation (dpairs (tninf i)) (map (fun j => (mabs M i j, 1)) (seq 0 q))) ->
  (forall j, (j < q)%nat -> inflate p (dfl (tn1 j)) <= n1) ->
  (forall i, (i < p)%nat -> inflate q (dfl (tninf i)) <= ninf) ->
  let k := (p * q)%nat in
  let fro := succ (fl (sqrt (succ (fl (succ (fl (dfl ts + 2 * INR k * eta)) * inv))))) in
  let hoelder := succ (fl (sqrt (succ (fl (n1 * ninf))))) in
  opbound p q M (Rmin fro hoelder) /\ opbound p q (mabs M) (Rmin fro hoelder).
Proof.
  intros p q M ts tn1 tninf inv n1 ninf Hp1 Hq1 Hk Hts Hinv Hpn1 Hpninf Hn1 Hninf k fro hoelder.
  pose proof u_pos. pose proof eta_pos. fold k in Hinv, Hk.
  assert (Hku : INR k * u <= / 4) by (apply small_k, Hk).
  pose proof (gamma_small k Hku) as Hg. pose proof (gamma_nonneg k ltac:(lra)) as Hg0.
  (* Frobenius: sum m^2 <= (s + k eta)/(1 - gamma_k) <= the code's inner float *)
  set (S := rsum p (fun i => rsum q (fun j => M i j * M i j))).
  assert (HS : S = dot (map (fun x => (mabs M (fst x) (snd x), mabs M (fst x) (snd x))) (allidx p q))).
  { unfold dot. rewrite map_map. simpl. rewrite lsum_allidx. unfold S, mabs.
    apply rsum_ext. intros i _. apply rsum_ext. intros j _. simpl. symmetry. apply abs_sq. }
  assert (HF : Forall (fun p0 => 0 <= fst p0 /\ 0 <= snd p0)
                 (map (fun x => (mabs M (fst x) (snd x), mabs M (fst x) (snd x))) (allidx p q))).
  { apply Forall_forall. intros x Hx. apply in_map_iff in Hx as (y & <- & _). simpl. split; apply Rabs_pos. }
  assert (Hlen : length (map (fun x => (mabs M (fst x) (snd x), mabs M (fst x) (snd x))) (allidx p q)) = k)
    by (rewrite map_length, allidx_length; reflexivity).
  pose proof (dot_nonneg_upper _ ts Hts HF) as Hd. rewrite Hlen in Hd. specialize (Hd Hku).
  rewrite <- HS in Hd.
  assert (HS0 : 0 <= S) by (apply rsum_nonneg; intros; apply rsum_nonneg; intros; apply Rle_0_sqr).
  assert (Hc : fl (2 * INR k * eta) = 2 * INR k * eta) by (apply fl_exact, format_nat_eta, Hk).
  assert (HX : S <= succ (fl (succ (fl (dfl ts + 2 * INR k * eta)) * inv))).
  { apply step_up.
    assert (Hs1 : dfl ts + INR k * eta <= succ (fl (dfl ts + 2 * INR k * eta))).
    { apply step_up. pose proof (pos_INR k). nra. }
    assert (Hsd : S <= (dfl ts + INR k * eta) / (1 - gamma k)).
    { apply Rmult_le_reg_r with (1 - gamma k); [lra|]. unfold Rdiv.
      rewrite Rmult_assoc, Rinv_l, Rmult_1_r by lra. lra. }
    assert (Hnum : 0 <= dfl ts + INR k * eta).
    { apply Rle_trans with ((1 - gamma k) * S); [apply Rmult_le_pos; lra | lra]. }
    assert (Hi0 : 0 < / (1 - gamma k)) by (apply Rinv_0_lt_compat; lra).
    eapply Rle_trans; [exact Hsd|]. unfold Rdiv. apply Rmult_le_compat; lra. }
  assert (Hfro : forall A, rsum p (fun i => rsum q (fun j => A i j * A i j)) = S -> opbound p q A fro).
  { intros A EA. apply (opbound_weaken _ _ _ (sqrt (succ (fl (succ (fl (dfl ts + 2 * INR k * eta)) * inv))))).
    - apply frobenius_bound. rewrite EA. exact HX.
    - apply step_up, Rle_refl. }
  (* Hoelder: the column and row sums from _mv with 1 *)
  assert (Hcol : forall j, (j < q)%nat -> rsum p (fun i => Rabs (M i j)) <= n1).
  { intros j Hj. eapply Rle_trans; [|apply Hn1, Hj].
    eapply Rle_trans; [|apply (mv_entry_upper p (mtr (mabs M)) (fun _ => 1) (fun _ => 1) j (tn1 j)); try assumption].
    - right. unfold mv, mtr, mabs. apply rsum_ext. intros; ring.
    - apply Hpn1, Hj.
    - intros i _. unfold mtr, mabs. pose proof (Rabs_pos (M i j)). lra.
    - apply Rle_trans with (INR (p * q)); [apply le_INR; nia | exact Hk]. }
  assert (Hrow : forall i, (i < p)%nat -> rsum q (fun j => Rabs (M i j)) <= ninf).
  { intros i Hi. eapply Rle_trans; [|apply Hninf, Hi].
    eapply Rle_trans; [|apply (mv_entry_upper q (mabs M) (fun _ => 1) (fun _ => 1) i (tninf i)); try assumption].
    - right. unfold mv, mabs. apply rsum_ext. intros; ring.
    - apply Hpninf, Hi.
    - intros j _. unfold mabs. pose proof (Rabs_pos (M i j)). lra.
    - apply Rle_trans with (INR (p * q)); [apply le_INR; nia | exact Hk]. }
  assert (Hn10 : 0 <= n1) by (eapply Rle_trans; [|apply (Hcol O); lia]; apply rsum_nonneg; intros; apply Rabs_pos).
  assert (Hni0 : 0 <= ninf) by (eapply Rle_trans; [|apply (Hrow O); lia]; apply rsum_nonneg; intros; apply Rabs_pos).
  assert (Hhol : forall A, (forall i j, Rabs (A i j) = Rabs (M i j)) -> opbound p q A hoelder).
  { intros A EA. apply (opbound_weaken _ _ _ (sqrt (n1 * ninf))).
    - rewrite Rmult_comm. apply holder_bound; try assumption.
      + intros i Hi. rewrite (rsum_ext q _ (fun j => Rabs (M i j))) by (intros; apply EA). apply Hrow, Hi.
      + intros j Hj. rewrite (rsum_ext p _ (fun i => Rabs (M i j))) by (intros; apply EA). apply Hcol, Hj.
    - apply up_sqrt. apply step_up, Rle_refl. }
  split; apply opbound_min.
  - apply Hfro. reflexivity.
  - apply Hhol. reflexivity.
  - apply Hfro. unfold S, mabs. apply rsum_ext. intros i _. apply rsum_ext. intros j _. apply abs_sq.
  - apply Hhol. intros. unfold mabs. apply Rabs_Rabsolu.
Qed.

(** Lemma 3.1 stacked ([_stacked.gram_deviation_upper]). *)
Theorem gram_deviation_upper_float : forall m r (X G : nat -> nat -> R) (tG : nat -> nat -> dtree) nD nu gu,
  INR m * u <= / 2 -> INR (m * r) <= 2 ^ 40 ->
  (forall i j, (i < r)%nat -> (j < r)%nat ->
     Permutation (dpairs (tG i j)) (map (fun k => (X k i, X k j)) (seq 0 m)) /\ G i j = dfl (tG i j)) ->
  (forall i, (i < r)%nat -> / 2 <= G i i <= 2) ->
  opbound r r (fun i j => if Nat.eq_dec i j then fl (G i j - 1) else G i j) nD ->
  opbound r r (mmul m (mtr (mabs X)) (mabs X)) nu -> gamma m <= gu ->
  opbound r r (fun i j => mmul m (mtr X) X i j - idm i j)
    (succ (fl (succ (fl (nD + succ (fl (gu * nu)))) + succ (fl (2 * INR (m * r) * eta))))).
Proof.
  intros m r X G tG nD nu gu Hm Hmr HG Hdiag HD Hnu Hgu.
  pose proof eta_pos. pose proof u_pos.
  pose proof (gamma_nonneg m ltac:(lra)) as Hg0.
  assert (Hnu0 : 0 <= nu) by (destruct Hnu; assumption). assert (HnD0 : 0 <= nD) by (destruct HD; assumption).
  (* the computed G - I is G - I exactly (Sterbenz on the diagonal) *)
  assert (HD' : opbound r r (fun i j => G i j - idm i j) nD).
  { apply (opbound_ext r r (fun i j => if Nat.eq_dec i j then fl (G i j - 1) else G i j)); [|exact HD].
    intros i j Hi Hj. unfold idm. destruct (Nat.eq_dec i j) as [->|]; [|ring].
    destruct (HG j j Hj Hj) as [_ E]. rewrite (gram_diagonal_shift_exact (G j j)); [reflexivity | |apply Hdiag, Hj].
    rewrite E. apply dfl_format. }
  (* ||G - X^T X|| <= gamma_m nu + m eta r (Lemma 2.1, G.1's assembly) *)
  assert (HE : opbound r r (fun i j => G i j - mmul m (mtr X) X i j) (gamma m * nu + INR m * eta * INR r)).
  { apply (lemma_g1_assembly r _ (mmul m (mtr (mabs X)) (mabs X))); try assumption.
    - intros i j _ _. unfold mmul, mtr, mabs. apply rsum_nonneg. intros; apply Rmult_le_pos; apply Rabs_pos.
    - apply Rmult_le_pos; [apply pos_INR | lra].
    - intros i j Hi Hj. destruct (HG i j Hi Hj) as [Hp E]. rewrite E.
      exact (mmul_entry_error m (mtr X) X i j (tG i j) Hp Hm). }
  assert (Hsum : opbound r r (fun i j => mmul m (mtr X) X i j - idm i j) (nD + (gamma m * nu + INR m * eta * INR r))).
  { apply (opbound_ext r r (fun i j => (G i j - idm i j) + (-1) * (G i j - mmul m (mtr X) X i j))); [intros; ring|].
    apply opbound_add; [exact HD'|].
    assert (0 <= gamma m * nu + INR m * eta * INR r).
    { apply Rplus_le_le_0_compat; [apply Rmult_le_pos; lra|].
      apply Rmult_le_pos; [apply Rmult_le_pos; [apply pos_INR | lra] | apply pos_INR]. }
    replace (gamma m * nu + INR m * eta * INR r) with (Rabs (-1) * (gamma m * nu + INR m * eta * INR r))
      by (rewrite Rabs_left by lra; ring).
    apply opbound_scal, HE. }
  apply (opbound_weaken _ _ _ _ _ Hsum). apply step_up.
  assert (A1 : nD + gamma m * nu <= succ (fl (nD + succ (fl (gu * nu))))).
  { apply step_up. apply Rplus_le_compat_l. apply step_up. apply Rmult_le_compat_r; assumption. }
  assert (A2 : INR m * eta * INR r <= succ (fl (2 * INR (m * r) * eta))).
  { apply step_up. rewrite mult_INR.
    assert (0 <= INR m * eta * INR r) by (apply Rmult_le_pos; [apply Rmult_le_pos; [apply pos_INR | lra] | apply pos_INR]).
    nra. }
  lra.
Qed.

(** Lemma 3.2 stacked ([_stacked.residual_norm_upper(W, X, s, Y)]): with
    [V_lj = fl(s_l Y_jl)] ([s = 1]: [V = Y^T] exactly, [fl(1 y) = y]),
    [P = fl(X V)] (any classical evaluation of each entry), [R_hat = fl(W - P)]
    (floats [W]), [nR >= ||R_hat||_2, || |R_hat| ||_2] ([norm2_upper]),
    [nN >= || |X| diag|s| |Y|^T ||_2] ([abs_product_norm2_upper] or, for
    [Y is X], [abs_symmetric_product_norm2_upper]), [maxrow >= max_i sum_l |x_il|]
    ([max _mv(|X|, 1)]), [gu >= gamma_(r+1)]: the code's
    [out = up(up(up((1 + 2u) nR) + up(gu nN)) + under)],
    [under = up(up(c eta) up(sqrt(m n)))], [c = up(up(4 r + 4) + up(4 maxrow))],
    bounds [||W - X diag(s) Y^T||_2]. *)
Theorem residual_norm_upper_float : forall m n r (W X Y Rh Pm : nat -> nat -> R) (s : nat -> R) (tP : nat -> nat -> dtree)
    nR nN maxrow gu,
  INR (S r) * u <= / 2 ->
  (forall i j, (i < m)%nat -> (j < n)%nat -> format (W i j)) ->
  (forall i j, (i < m)%nat -> (j < n)%nat ->
     Permutation (dpairs (tP i j)) (map (fun l => (X i l, fl (s l * Y j l))) (seq 0 r)) /\ Pm i j = dfl (tP i j)) ->
  (forall i j, (i < m)%nat -> (j < n)%nat -> Rh i j = fl (W i j - Pm i j)) ->
  opbound m n Rh nR -> opbound m n (mabs Rh) nR ->
  opbound m n (mmul r (fun i l => Rabs (X i l) * Rabs (s l)) (mtr (mabs Y))) nN ->
  (forall i, (i < m)%nat -> rsum r (fun l => Rabs (X i l)) <= maxrow) -> 0 <= maxrow ->
  gamma (S r) <= gu ->
  let c := succ (fl (succ (fl (4 * INR r + 4)) + succ (fl (4 * maxrow)))) in
  let under := succ (fl (succ (fl (c * eta)) * succ (fl (sqrt (INR m * INR n))))) in
  opbound m n (fun i j => W i j - mmul r (fun a l => X a l * s l) (mtr Y) i j)
    (succ (fl (succ (fl (succ (fl ((1 + 2 * u) * nR)) + succ (fl (gu * nN)))) + under))).
Proof.
  intros m n r W X Y Rh Pm s tP nR nN maxrow gu Hr HW HP HR HnR HanR HN Hmax Hmax0' Hgu c under.
  pose proof u_pos. pose proof eta_pos. pose proof u_lt_1.
  assert (Hg0 : 0 <= gamma (S r)) by (apply gamma_nonneg; lra).
  assert (HnR0 : 0 <= nR) by (destruct HnR; assumption). assert (HnN0 : 0 <= nN) by (destruct HN; assumption).
  assert (Hmax0 : forall i, (i < m)%nat -> 0 <= rsum r (fun l => Rabs (X i l))) by (intros; apply rsum_nonneg; intros; apply Rabs_pos).
  (* entrywise: |(W - X S Y^T) - R_hat| <= u |R_hat| + gamma N + (r + maxrow) eta *)
  set (Ex := fun i j => W i j - mmul r (fun a l => X a l * s l) (mtr Y) i j).
  set (N := mmul r (fun i l => Rabs (X i l) * Rabs (s l)) (mtr (mabs Y))).
  set (kap := (INR r + maxrow) * eta).
  assert (Hent : forall i j, (i < m)%nat -> (j < n)%nat ->
    Rabs (Ex i j - Rh i j) <= u * mabs Rh i j + gamma (S r) * N i j + kap).
  { intros i j Hi Hj. destruct (HP i j Hi Hj) as [Hp EP].
    set (qs := map (fun l => (X i l, s l, Y j l)) (seq 0 r)).
    assert (Eq : map scaled qs = map (fun l => (X i l, fl (s l * Y j l))) (seq 0 r)) by (unfold qs; rewrite map_map; reflexivity).
    assert (Hlen : length qs = r) by (unfold qs; rewrite map_length, seq_length; reflexivity).
    pose proof (residual_entry_error qs (tP i j)) as Hre. rewrite Eq, Hlen in Hre. specialize (Hre Hp Hr).
    assert (E3 : lsum (map exact3 qs) = mmul r (fun a l => X a l * s l) (mtr Y) i j).
    { unfold qs. rewrite map_map, lsum_map_seq. unfold mmul, mtr. apply rsum_ext. intros; simpl; ring. }
    assert (A3 : lsum (map abs3 qs) = N i j).
    { unfold qs, N. rewrite map_map, lsum_map_seq. unfold mmul, mtr, mabs. apply rsum_ext. intros; simpl; ring. }
    assert (AX : lsum (map absx qs) = rsum r (fun l => Rabs (X i l))).
    { unfold qs. rewrite map_map, lsum_map_seq. apply rsum_ext. intros; reflexivity. }
    rewrite E3, A3, AX, <- EP in Hre.
    assert (Hf : format (Pm i j)) by (rewrite EP; apply dfl_format).
    pose proof (fl_sub_error_computed_u (W i j) (Pm i j) (HW i j Hi Hj) Hf) as Hs.
    rewrite <- (HR i j Hi Hj) in Hs.
    assert (Ek : (INR r + rsum r (fun l => Rabs (X i l))) * eta <= kap).
    { unfold kap. apply Rmult_le_compat_r; [lra|]. pose proof (Hmax i Hi). lra. }
    unfold Ex, mabs.
    replace (W i j - mmul r (fun a l => X a l * s l) (mtr Y) i j - Rh i j)
      with (((W i j - Pm i j) - Rh i j) + (Pm i j - mmul r (fun a l => X a l * s l) (mtr Y) i j)) by ring.
    eapply Rle_trans; [apply Rabs_triang|]. lra. }
  assert (Hkap0 : 0 <= kap) by (unfold kap; apply Rmult_le_pos; [pose proof (pos_INR r); lra | lra]).
  assert (HNn : forall i j, (i < m)%nat -> (j < n)%nat -> 0 <= N i j).
  { intros i j _ _. unfold N, mmul, mtr, mabs. apply rsum_nonneg. intros.
    apply Rmult_le_pos; [apply Rmult_le_pos|]; apply Rabs_pos. }
  (* the norm: ||Ex|| <= nR + u nR + gamma nN + kap sqrt(m n) *)
  assert (HD : opbound m n (fun i j => Ex i j - Rh i j) (u * nR + gamma (S r) * nN + kap * sqrt (INR m * INR n))).
  { apply (opbound_mono m n _ (fun i j => u * mabs Rh i j + gamma (S r) * N i j + kap)).
    - intros i j Hi Hj. exact (Hent i j Hi Hj).
    - apply opbound_add; [apply opbound_add|].
      + apply opbound_scal_nonneg; [exact HanR | lra].
      + apply opbound_scal_nonneg; [exact HN | exact Hg0].
      + apply opbound_const, Hkap0. }
  assert (HEx : opbound m n Ex (nR + (u * nR + gamma (S r) * nN + kap * sqrt (INR m * INR n)))).
  { apply (opbound_ext m n (fun i j => Rh i j + (Ex i j - Rh i j))); [intros; ring|].
    apply opbound_add; assumption. }
  apply (opbound_weaken _ _ _ _ _ HEx).
  assert (Hsq0 : 0 <= sqrt (INR m * INR n)) by apply sqrt_pos.
  assert (A1 : nR + u * nR <= succ (fl ((1 + 2 * u) * nR))) by (apply step_up; nra).
  assert (A2 : gamma (S r) * nN <= succ (fl (gu * nN))) by (apply step_up; apply Rmult_le_compat_r; assumption).
  assert (Hc : INR r + maxrow <= c).
  { unfold c. apply step_up. pose proof (pos_INR r).
    pose proof (step_up (4 * INR r + 4) (4 * INR r + 4) (Rle_refl _)).
    pose proof (step_up (4 * maxrow) (4 * maxrow) (Rle_refl _)). lra. }
  assert (A3 : kap * sqrt (INR m * INR n) <= under).
  { unfold under, kap. apply step_up. apply Rmult_le_compat.
    - apply Rmult_le_pos; [pose proof (pos_INR r); lra | lra].
    - exact Hsq0.
    - apply step_up. apply Rmult_le_compat_r; [lra | exact Hc].
    - apply step_up, Rle_refl. }
  apply step_up. apply Rle_trans with ((nR + u * nR + gamma (S r) * nN) + kap * sqrt (INR m * INR n)); [lra|].
  apply Rplus_le_compat; [|exact A3]. apply step_up. lra.
Qed.

(** The residual forms used elsewhere: [X diag(lambda) X^T] as
    [Lemma112]'s [mmul (mmul U (diagm lam)) (mtr U)] (Lemma 11.2's [e],
    Theorem G's [e]) and [s = 1] ([L L^T]: Lemma 11.2's and 11.1's [eRR]). *)
Lemma residual_form_diag : forall m d (W U : nat -> nat -> R) (lam : nat -> R) c,
  opbound m m (fun i j => W i j - mmul d (fun a l => U a l * lam l) (mtr U) i j) c ->
  opbound m m (fun i j => W i j - mmul d (mmul d U (diagm lam)) (mtr U) i j) c.
Proof.
  intros m d W U lam c H.
  apply (opbound_ext m m (fun i j => W i j - mmul d (fun a l => U a l * lam l) (mtr U) i j)); [|exact H].
  intros i j _ _. rewrite diag_congruence. reflexivity.
Qed.

Lemma residual_form_one : forall m n r (W X Y : nat -> nat -> R) c,
  opbound m n (fun i j => W i j - mmul r (fun a l => X a l * 1) (mtr Y) i j) c ->
  opbound m n (fun i j => W i j - mmul r X (mtr Y) i j) c.
Proof.
  intros m n r W X Y c H.
  apply (opbound_ext m n (fun i j => W i j - mmul r (fun a l => X a l * 1) (mtr Y) i j)); [|exact H].
  intros i j _ _. unfold mmul. f_equal. apply rsum_ext. intros; ring.
Qed.

(** ** The heads' route end to end ([product._certify_stack_theorem_g], one slice)

    "The code computed [x] by [f]" as a predicate: some classical
    evaluation of every product, some tree of every sum, and the code's
    scalar steps; each predicate implies its bound (the theorems above).
    With them, [certify_stack_theorem_g_end_to_end] has no float premise
    left but these descriptions of the code's computation, Arb's constants
    (F6) and the spectral facts of [Lemma112.v]. *)
Definition norm2_upper_computed (p q : nat) (M : nat -> nat -> R) (nrm : R) : Prop :=
  exists (ts : dtree) (tn1 tninf : nat -> dtree) inv n1 ninf,
    Permutation (dpairs ts) (map (fun x => (mabs M (fst x) (snd x), mabs M (fst x) (snd x))) (allidx p q)) /\
    / (1 - gamma (p * q)) <= inv /\
    (forall j, (j < q)%nat -> Permutation (dpairs (tn1 j)) (map (fun i => (mtr (mabs M) j i, 1)) (seq 0 p))) /\
    (forall i, (i < p)%nat -> Permutation (dpairs (tninf i)) (map (fun j => (mabs M i j, 1)) (seq 0 q))) /\
    (forall j, (j < q)%nat -> inflate p (dfl (tn1 j)) <= n1) /\
    (forall i, (i < p)%nat -> inflate q (dfl (tninf i)) <= ninf) /\
    nrm = Rmin (succ (fl (sqrt (succ (fl (succ (fl (dfl ts + 2 * INR (p * q) * eta)) * inv))))))
               (succ (fl (sqrt (succ (fl (n1 * ninf)))))).

Lemma norm2_upper_computed_sound : forall p q M nrm,
  (1 <= p)%nat -> (1 <= q)%nat -> INR (p * q) <= 2 ^ 40 -> norm2_upper_computed p q M nrm ->
  opbound p q M nrm /\ opbound p q (mabs M) nrm /\ format nrm.
Proof.
  intros p q M nrm Hp Hq Hk (ts & tn1 & tninf & inv & n1 & ninf & H1 & H2 & H3 & H4 & H5 & H6 & ->).
  destruct (norm2_upper_float p q M ts tn1 tninf inv n1 ninf Hp Hq Hk H1 H2 H3 H4 H5 H6) as [A B].
  split; [exact A|]. split; [exact B|].
  unfold Rmin. destruct (Rle_dec _ _); apply up_format.
Qed.

Definition gram_deviation_upper_computed (m r : nat) (X : nat -> nat -> R) (out : R) : Prop :=
  exists (G : nat -> nat -> R) (tG : nat -> nat -> dtree) (tv tw : nat -> dtree) nD nu gu,
    (forall i j, (i < r)%nat -> (j < r)%nat ->
       Permutation (dpairs (tG i j)) (map (fun k => (X k i, X k j)) (seq 0 m)) /\ G i j = dfl (tG i j)) /\
    (forall i, (i < r)%nat -> / 2 <= G i i <= 2) /\
    norm2_upper_computed r r (fun i j => if Nat.eq_dec i j then fl (G i j - 1) else G i j) nD /\
    (forall i, (i < m)%nat -> Permutation (dpairs (tv i)) (map (fun l => (mabs X i l, 1)) (seq 0 r))) /\
    (forall j, (j < r)%nat ->
       Permutation (dpairs (tw j)) (map (fun i => (mtr (mabs X) j i, inflate r (dfl (tv i)))) (seq 0 m))) /\
    (forall j, (j < r)%nat -> inflate m (dfl (tw j)) <= nu) /\
    gamma m <= gu /\
    out = succ (fl (succ (fl (nD + succ (fl (gu * nu)))) + succ (fl (2 * INR (m * r) * eta)))).

Lemma gram_deviation_upper_computed_sound : forall m r X out,
  (1 <= m)%nat -> (1 <= r)%nat -> INR (m * r) <= 2 ^ 40 -> INR (r * r) <= 2 ^ 40 ->
  gram_deviation_upper_computed m r X out ->
  opbound r r (fun i j => mmul m (mtr X) X i j - idm i j) out.
Proof.
  intros m r X out Hm Hr Hmr Hrr (G & tG & tv & tw & nD & nu & gu & HG & Hd & HnD & Hv & Hw & Hnu & Hgu & ->).
  assert (Hm40 : INR m <= 2 ^ 40) by (apply Rle_trans with (INR (m * r)); [apply le_INR; nia | exact Hmr]).
  assert (Hr40 : INR r <= 2 ^ 40) by (apply Rle_trans with (INR (m * r)); [apply le_INR; nia | exact Hmr]).
  pose proof (small_k m Hm40).
  destruct (norm2_upper_computed_sound r r _ nD Hr Hr Hrr HnD) as (HnD' & _ & _).
  apply (gram_deviation_upper_float m r X G tG); try assumption; [lra|].
  apply (abs_gram_norm2_upper_float m r X tv tw nu); assumption.
Qed.

(** [residual_norm_upper(W, X, s, X)] (the symmetric chain; [s = 1] for
    [s = None], where [fl(1 y) = y]). *)
Definition residual_norm_upper_sym_computed (m r : nat) (W X : nat -> nat -> R) (s : nat -> R) (out : R) : Prop :=
  exists (Pm Rh : nat -> nat -> R) (tP : nat -> nat -> dtree) (tc tz tm : nat -> dtree) (c' : nat -> R) nR nN maxrow gu,
    (forall i j, (i < m)%nat -> (j < m)%nat ->
       Permutation (dpairs (tP i j)) (map (fun l => (X i l, fl (s l * X j l))) (seq 0 r)) /\ Pm i j = dfl (tP i j)) /\
    (forall i j, (i < m)%nat -> (j < m)%nat -> Rh i j = fl (W i j - Pm i j)) /\
    norm2_upper_computed m m Rh nR /\
    (forall l, (l < r)%nat -> Permutation (dpairs (tc l)) (map (fun i => (mtr (mabs X) l i, 1)) (seq 0 m))) /\
    (forall l, (l < r)%nat -> Rabs (s l) * inflate m (dfl (tc l)) <= c' l) /\
    (forall i, (i < m)%nat -> Permutation (dpairs (tz i)) (map (fun l => (mabs X i l, c' l)) (seq 0 r))) /\
    (forall i, (i < m)%nat -> inflate r (dfl (tz i)) <= nN) /\
    (forall i, (i < m)%nat -> Permutation (dpairs (tm i)) (map (fun l => (mabs X i l, 1)) (seq 0 r))) /\
    (forall i, (i < m)%nat -> inflate r (dfl (tm i)) <= maxrow) /\
    gamma (S r) <= gu /\
    let c := succ (fl (succ (fl (4 * INR r + 4)) + succ (fl (4 * maxrow)))) in
    let under := succ (fl (succ (fl (c * eta)) * succ (fl (sqrt (INR m * INR m))))) in
    out = succ (fl (succ (fl (succ (fl ((1 + 2 * u) * nR)) + succ (fl (gu * nN)))) + under)).

Lemma residual_norm_upper_sym_computed_sound : forall m r W X s out,
  (1 <= m)%nat -> (1 <= r)%nat -> INR (m * m) <= 2 ^ 40 -> INR (m * r) <= 2 ^ 40 ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> format (W i j)) ->
  residual_norm_upper_sym_computed m r W X s out ->
  opbound m m (fun i j => W i j - mmul r (fun a l => X a l * s l) (mtr X) i j) out.
Proof.
  intros m r W X s out Hm Hr Hmm Hmr HW
    (Pm & Rh & tP & tc & tz & tm & c' & nR & nN & maxrow & gu & HP & HR & HnR & Hc & Hc' & Hz & HN & Htm & Hmax & Hgu & Eo).
  assert (Hm40 : INR m <= 2 ^ 40) by (apply Rle_trans with (INR (m * r)); [apply le_INR; nia | exact Hmr]).
  assert (Hr40 : INR r <= 2 ^ 40) by (apply Rle_trans with (INR (m * r)); [apply le_INR; nia | exact Hmr]).
  destruct (norm2_upper_computed_sound m m Rh nR Hm Hm Hmm HnR) as (H1 & H2 & _).
  assert (Hrows : forall i, (i < m)%nat -> rsum r (fun l => Rabs (X i l)) <= maxrow).
  { intros i Hi. eapply Rle_trans; [|apply Hmax, Hi].
    eapply Rle_trans; [|apply (mv_entry_upper r (mabs X) (fun _ => 1) (fun _ => 1) i (tm i)); try assumption].
    - right. unfold mv, mabs. apply rsum_ext. intros; ring.
    - apply Htm, Hi.
    - intros l _. unfold mabs. pose proof (Rabs_pos (X i l)). lra. }
  assert (Hmax0 : 0 <= maxrow) by (eapply Rle_trans; [|apply (Hrows O); lia]; apply rsum_nonneg; intros; apply Rabs_pos).
  cbv zeta in Eo. rewrite Eo.
  assert (HSr : INR (S r) * u <= / 2).
  { rewrite S_INR. pose proof u_small. pose proof u_pos. pose proof (pos_INR r).
    apply Rle_trans with ((2 ^ 40 + 1) * / 2 ^ 53); [|simpl; lra].
    apply Rmult_le_compat; lra. }
  assert (HNb : opbound m m (mmul r (fun i l => Rabs (X i l) * Rabs (s l)) (mtr (mabs X))) nN)
    by (apply (abs_symmetric_product_norm2_upper_float m r X s tc tz c' nN); assumption).
  exact (residual_norm_upper_float m m r W X X Rh Pm s tP nR nN maxrow gu HSr HW HP HR H1 H2 HNb Hrows Hmax0 Hgu).
Qed.

Section EndToEnd.
Variable eig : nat -> (nat -> nat -> R) -> nat -> R.
Hypothesis weyl : forall n X Y c, symm n X -> symm n Y ->
  opbound n n (fun i j => X i j - Y i j) c -> forall i, (i < n)%nat -> Rabs (eig n X i - eig n Y i) <= c.
Hypothesis gram_swap : forall p q (Z : nat -> nat -> R) i, (i < p)%nat -> (i < q)%nat ->
  eig p (mmul q Z (mtr Z)) i = eig q (mmul p (mtr Z) Z) i.
Hypothesis gram_psd : forall p q (Z : nat -> nat -> R) i, (i < p)%nat -> 0 <= eig p (mmul q Z (mtr Z)) i.
Hypothesis eig_idm : forall n i, (i < n)%nat -> eig n idm i = 1.
Hypothesis eig_sorted : forall n M i j, symm n M -> (i <= j < n)%nat -> eig n M j <= eig n M i.
Hypothesis eig_diag : forall k (lam lv : nat -> R),
  Permutation (map lam (seq 0 k)) (map lv (seq 0 k)) -> (forall i j, (i <= j < k)%nat -> lv j <= lv i) ->
  forall i, (i < k)%nat -> eig k (diagm lam) i = lv i.
Hypothesis ostrowski : forall k (S Am : nat -> nat -> R) i, symm k Am ->
  0 < eig k (mmul k (mtr S) S) (k - 1)%nat -> (i < k)%nat ->
  exists th, eig k (mmul k (mtr S) S) (k - 1)%nat <= th <= eig k (mmul k (mtr S) S) O /\
             eig k (mmul k (mmul k S Am) (mtr S)) i = th * eig k Am i.

(** [_certify_stack_theorem_g] for one slice, end to end: every float the
    route uses is described by the code's computation (the [*_computed]
    predicates and the trees of [Lemma112.certify_stack_theorem_g_sound]);
    the premises left are Arb's constants (F6: [gum], [gun], [gu2],
    [undA], [undB], [cu] and the [inv], [gu] inside the predicates) and the
    spectral facts of this section. *)
Theorem certify_stack_theorem_g_end_to_end : forall m n d (A B L U Pm Mh GAh GBh : nat -> nat -> R) (lam lv : nat -> R)
    (tGA tGB tP tM : nat -> nat -> dtree) (tvA twA tv tw tz tc tr : nat -> dtree) (tsB : stree)
    nKA N n1 ninf nL alU e eRR gum gun gu2 undA undB cu i,
  INR (d * d) <= 2 ^ 40 ->
  (1 <= d)%nat -> (d <= m)%nat -> (d <= n)%nat -> INR m <= 2 ^ 40 -> INR n <= 2 ^ 40 -> (i < d)%nat ->
  (* the Gram matrices: [np.matmul(S^T, S)] *)
  (forall k l, (k < d)%nat -> (l < d)%nat ->
     Permutation (dpairs (tGA k l)) (map (fun r => (A r k, A r l)) (seq 0 m)) /\ GAh k l = dfl (tGA k l)) ->
  (forall k l, (k < d)%nat -> (l < d)%nat ->
     Permutation (dpairs (tGB k l)) (map (fun r => (B r k, B r l)) (seq 0 n)) /\ GBh k l = dfl (tGB k l)) ->
  (* nu_A: [_stacked.abs_gram_norm2_upper(|A|)] *)
  (forall r, (r < m)%nat -> Permutation (dpairs (tvA r)) (map (fun l => (mabs A r l, 1)) (seq 0 d))) ->
  (forall k, (k < d)%nat ->
     Permutation (dpairs (twA k)) (map (fun r => (mtr (mabs A) k r, inflate d (dfl (tvA r)))) (seq 0 m))) ->
  (forall k, (k < d)%nat -> inflate m (dfl (twA k)) <= nKA) ->
  (* nu_B from the diagonal: [_inflate(_inflate(G_ll, n).sum(), d)] *)
  Permutation (sleaves tsB) (map (fun l => inflate n (GBh l l)) (seq 0 d)) ->
  (* [_congruence_core] *)
  gamma m <= gum -> gamma n <= gun -> 2 * INR m * INR d * eta <= undA -> 2 * INR n * INR d * eta <= undB ->
  let errA := succ (fl (succ (fl (gum * nKA)) + undA)) in
  let errB := succ (fl (succ (fl (gun * inflate d (sfl tsB))) + undB)) in
  (forall k l, (k < d)%nat -> (l < d)%nat ->
     Permutation (dpairs (tP k l)) (map (fun r => (mtr L k r, GAh r l)) (seq 0 d)) /\ Pm k l = dfl (tP k l)) ->
  (forall k l, (k < d)%nat -> (l < d)%nat ->
     Permutation (dpairs (tM k l)) (map (fun r => (Pm k r, L r l)) (seq 0 d)) /\ Mh k l = dfl (tM k l)) ->
  norm2_upper_computed d d L nL ->
  (forall j, (j < d)%nat -> Permutation (dpairs (tv j)) (map (fun l => (mtr (mabs (mtr L)) j l, 1)) (seq 0 d))) ->
  (forall k, (k < d)%nat ->
     Permutation (dpairs (tw k)) (map (fun l => (kmax GAh k l, inflate d (dfl (tv l)))) (seq 0 d))) ->
  (forall k, (k < d)%nat ->
     Permutation (dpairs (tz k)) (map (fun l => (mabs (mtr L) k l, inflate d (dfl (tw l)))) (seq 0 d))) ->
  (forall k, (k < d)%nat -> inflate d (dfl (tz k)) <= N) ->
  gamma (d + d) <= gu2 -> 2 * INR d * eta * sqrt (INR d * INR d) <= cu ->
  let beta := succ (fl (succ (fl (succ (fl (gu2 * N)) + succ (fl (succ (fl (nL * nL)) * errA))))
                        + succ (fl (cu * succ (fl (1 + fl (2 * nL))))))) in
  residual_norm_upper_sym_computed d d GBh L (fun _ => 1) eRR ->
  (forall j, (j < d)%nat -> Permutation (dpairs (tc j)) (map (fun k => (mtr (mabs GAh) j k, 1)) (seq 0 d))) ->
  (forall k, (k < d)%nat -> Permutation (dpairs (tr k)) (map (fun j => (mabs GAh k j, 1)) (seq 0 d))) ->
  (forall j, (j < d)%nat -> inflate d (dfl (tc j)) <= n1) ->
  (forall k, (k < d)%nat -> inflate d (dfl (tr k)) <= ninf) ->
  let nGA := succ (fl (succ (fl (sqrt n1)) * succ (fl (sqrt ninf)))) in
  let eps := succ (fl (succ (fl (nGA + errA)) * succ (fl (errB + eRR)))) in
  (* [eigh] of [M_hat]: any [U], [lam]; [lv] = [lam] sorted descending *)
  gram_deviation_upper_computed d d U alU -> alU < 1 ->
  residual_norm_upper_sym_computed d d Mh U lam e ->
  Permutation (map lam (seq 0 d)) (map lv (seq 0 d)) -> (forall k l, (k <= l < d)%nat -> lv l <= lv k) ->
  let c := succ (fl (succ (fl (beta + e)) + eps)) in
  let grow := succ (fl (1 + alU)) in
  let shrink := Rmax (pred (fl (1 - alU))) 0 in
  g_lower_end lv c grow shrink i <= sqrt (eig n (mmul m (mtr (mmul d A (mtr B))) (mmul d A (mtr B))) i)
    <= g_upper_end lv c grow shrink i.
Proof.
  intros m n d A B L U Pm Mh GAh GBh lam lv tGA tGB tP tM tvA twA tv tw tz tc tr tsB
    nKA N n1 ninf nL alU e eRR gum gun gu2 undA undB cu i Hdd
    Hd1 Hdm Hdn Hm Hn Hi HGA HGB HvA HwA HnKA HsB Hgum Hgun HundA HundB errA errB
    HP HM HnL Hv Hw Hz HN Hgu2 Hcu beta HeRR Htc Htr Hn1 Hninf nGA eps HU HalU He Hperm Hsort
    c grow shrink.
  destruct (norm2_upper_computed_sound d d L nL Hd1 Hd1 Hdd HnL) as (HL & HaL & HnLf).
  assert (HdR : INR d <= 2 ^ 40) by (apply Rle_trans with (INR m); [apply le_INR; exact Hdm | exact Hm]).
  assert (HU' : opbound d d (fun k l => mmul d (mtr U) U k l - idm k l) alU)
    by (apply (gram_deviation_upper_computed_sound d d U alU Hd1 Hd1 Hdd Hdd HU)).
  assert (HMf : forall k l, (k < d)%nat -> (l < d)%nat -> format (Mh k l)).
  { intros k l Hk Hl. destruct (HM k l Hk Hl) as [_ E]. rewrite E. apply dfl_format. }
  assert (HGf : forall k l, (k < d)%nat -> (l < d)%nat -> format (GBh k l)).
  { intros k l Hk Hl. destruct (HGB k l Hk Hl) as [_ E]. rewrite E. apply dfl_format. }
  assert (He' : opbound d d (fun k l => Mh k l - mmul d (mmul d U (diagm lam)) (mtr U) k l) e).
  { apply residual_form_diag. exact (residual_norm_upper_sym_computed_sound d d Mh U lam e Hd1 Hd1 Hdd Hdd HMf He). }
  assert (HeRR' : opbound d d (fun k l => GBh k l - mmul d L (mtr L) k l) eRR).
  { apply residual_form_one.
    exact (residual_norm_upper_sym_computed_sound d d GBh L (fun _ => 1) eRR Hd1 Hd1 Hdd Hdd HGf HeRR). }
  exact (certify_stack_theorem_g_sound eig weyl gram_swap gram_psd eig_idm eig_sorted eig_diag ostrowski
           m n d A B L U Pm Mh GAh GBh lam lv tGA tGB tP tM tvA twA tv tw tz tc tr tsB
           nKA N n1 ninf nL alU e eRR gum gun gu2 undA undB cu i
           Hd1 Hdm Hdn Hm Hn Hi HGA HGB HvA HwA HnKA HsB Hgum Hgun HundA HundB
           HP HM HL HaL HnLf Hv Hw Hz HN Hgu2 Hcu HeRR' Htc Htr Hn1 Hninf HU' HalU He' Hperm Hsort).
Qed.

End EndToEnd.
