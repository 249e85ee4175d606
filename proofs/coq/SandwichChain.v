(** * The Collatz-Wielandt chains of Lemmas 3.4 and 3.4-T, as the code computes them

    Backs [proofs/enclosure.md] §3 Lemma 3.4 (the bound on
    [rho(N_U)], [N_U = |U||Lambda||U|^T]) and [proofs/enclosure-gram.md]
    Lemma 3.4-T ([N_T = |Q||T||Q|^T]), their *Evaluation*; code:
    [certbound/enclose/fperror.py] ([_abs_sandwich_rho]: [z1];
    [_collatz_wielandt_step]: [z2] and the two quotient bounds;
    the middles [tridiagonal_abs_matvec_upper] for [|T|] and
    [_inflate(|lambda| v, 1)] for [|Lambda|]).

    - [sandwich_step]: if [c >= |U|^T x] (exact) and the middle's floats
      [t >= M c], then [z = _inflate(fl(|U| t), r)] (any classical
      evaluation of each row) is [>= (N x)_i], [N = |U| M |U|^T];
    - [colsum_upper_sum] ([x = 1]: [cU = _inflate(numpy sums of |U|, m)],
      any tree, row chunks included), [colsum_upper_mv] ([x = z1]: any
      classical evaluation of [|U|^T z1], e.g. the running sum over row
      chunks);
    - [tridiagonal_middle_upper]: [tridiagonal_abs_matvec_upper]'s entry
      [_inflate(fl(fl(fl(|d_i| v_i) + fl(|e_i| v_(i+1))) + fl(|e_(i-1)| v_(i-1))), 3)]
      (the terms that exist) is [>= (|T| v)_i] ([T = NormBounds.trim d e]);
      [diagonal_middle_upper]: [_inflate(fl(|lambda_j| v_j), 1) >= |lambda_j| v_j];
    - [abs_sandwich_rho_bound]: with [z1 >= N 1] and [z2 >= N z1] as above,
      [||N||_2 <= (r1 + eta)/(1 - u)] for a float [r1 >= max z1] and
      [||N||_2 <= (r2 + eta)/(1 - u)] for a float [r2 >= max fl(z2_i / z1_i)]
      (the code evaluates both in Arb and keeps the smaller finite one,
      F6; [NormBounds.collatz_wielandt], [TheoremGFloat.quotient_max_upper]). *)

From Coq Require Import Reals Psatz List Permutation.
From Flocq Require Import Core.
From Certbound Require Import FPModel Summation DotProduct FastCertificate MatvecChain NormBounds TheoremGFloat Lemma112.
Import ListNotations.
Open Scope R_scope.

(** [_inflate] of a nonnegative float is positive (it adds [2(k+2) eta]). *)
Lemma inflate_pos : forall k v, 0 <= v -> INR k <= 2 ^ 40 -> 0 < inflate k v.
Proof.
  intros k v Hv Hk. unfold inflate. pose proof eta_pos. pose proof u_pos. pose proof (pos_INR k).
  assert (Hc : 0 < 2 * (INR k + 2) * eta) by (apply Rmult_lt_0_compat; lra).
  assert (Hq1 : 2 * (INR k + 2) * eta <= fl (v + 2 * (INR k + 2) * eta)).
  { rewrite <- (fl_exact (2 * (INR k + 2) * eta)) at 1 by (apply inflate_c_format, Hk). apply fl_le. lra. }
  assert (Hf : 1 <= 1 + 2 * (INR k + 2) * u) by nra.
  assert (Hq2 : fl (2 * (INR k + 2) * eta) <= fl (fl (v + 2 * (INR k + 2) * eta) * (1 + 2 * (INR k + 2) * u))).
  { apply fl_le. nra. }
  rewrite (fl_exact _ (inflate_c_format k Hk)) in Hq2. lra.
Qed.

(** One step of the chain: [z_i >= (|U| M |U|^T x)_i]. *)
Theorem sandwich_step : forall m r (U M : nat -> nat -> R) (x c t : nat -> R) (tz : nat -> dtree),
  (1 <= r)%nat -> INR r <= 2 ^ 40 ->
  (forall j l, (j < r)%nat -> (l < r)%nat -> 0 <= M j l) ->
  (forall l, (l < r)%nat -> mv m (mtr (mabs U)) x l <= c l) ->
  (forall l, (l < r)%nat -> 0 <= mv m (mtr (mabs U)) x l) ->
  (forall j, (j < r)%nat -> mv r M c j <= t j) ->
  (forall i, (i < m)%nat -> Permutation (dpairs (tz i)) (map (fun l => (mabs U i l, t l)) (seq 0 r))) ->
  forall i, (i < m)%nat -> mv m (mmul r (mmul r (mabs U) M) (mtr (mabs U))) x i <= inflate r (dfl (tz i)).
Proof.
  intros m r U M x c t tz Hr1 Hr HM Hc Hx0 Ht Hpz i Hi.
  rewrite mv_mmul, mv_mmul.
  set (V := mv m (mtr (mabs U)) x).
  assert (HMV : forall j, (j < r)%nat -> 0 <= mv r M V j <= t j).
  { intros j Hj. split.
    - unfold mv at 1. apply rsum_nonneg. intros l Hl. apply Rmult_le_pos; [apply HM; assumption | apply Hx0, Hl].
    - eapply Rle_trans; [|apply Ht, Hj]. apply mv_mono; [intros l Hl; apply HM; assumption | exact Hc]. }
  apply (mv_entry_upper r (mabs U) t (mv r M V) i (tz i)); try assumption; [apply Hpz, Hi|].
  intros l Hl. split; [unfold mabs; apply Rabs_pos | apply HMV, Hl].
Qed.

(** [x = 1]: [cU_l = _inflate(sum_i |U_il|, m)], the sum any tree of the
    [m] floats [|U_il|] (numpy's [sum], the running sum over row chunks). *)
Lemma colsum_upper_sum : forall m (U : nat -> nat -> R) l (tc : stree),
  (1 <= m)%nat -> INR m <= 2 ^ 40 -> (forall i, (i < m)%nat -> format (U i l)) ->
  Permutation (sleaves tc) (map (fun i => Rabs (U i l)) (seq 0 m)) ->
  mv m (mtr (mabs U)) (fun _ => 1) l <= inflate m (sfl tc).
Proof.
  intros m U l tc Hm1 Hm Hf Hp.
  eapply Rle_trans; [|apply (sum_entry_upper m (fun i => Rabs (U i l)) tc Hp); try assumption].
  - right. unfold mv, mtr, mabs. apply rsum_ext. intros; ring.
  - intros i Hi. split; [apply generic_format_abs, Hf, Hi | apply Rabs_pos].
Qed.

(** [x = z1 >= 0]: [_inflate(fl(|U|^T z1), m)], any classical evaluation. *)
Lemma colsum_upper_mv : forall m (U : nat -> nat -> R) (z1 : nat -> R) l (ty : dtree),
  (1 <= m)%nat -> INR m <= 2 ^ 40 -> (forall i, (i < m)%nat -> 0 <= z1 i) ->
  Permutation (dpairs ty) (map (fun i => (mtr (mabs U) l i, z1 i)) (seq 0 m)) ->
  mv m (mtr (mabs U)) z1 l <= inflate m (dfl ty).
Proof.
  intros m U z1 l ty Hm1 Hm Hz Hp. apply (mv_entry_upper m _ z1); try assumption.
  intros i Hi. split; [unfold mtr, mabs; apply Rabs_pos | pose proof (Hz i Hi); lra].
Qed.

(** The [|Lambda|] middle of [symmetric_residual_norm_bound]. *)
Lemma diagonal_middle_upper : forall r (lam c : nat -> R) j,
  (j < r)%nat -> 0 <= c j ->
  mv r (diagm (fun l => Rabs (lam l))) c j <= inflate 1 (fl (Rabs (lam j) * c j)).
Proof.
  intros r lam c j Hj Hc.
  replace (mv r (diagm (fun l => Rabs (lam l))) c j) with (Rabs (lam j) * c j).
  - apply inflate1_upper; [apply Rabs_pos | lra].
  - unfold mv, diagm. rewrite (rsum_ext r _ (fun l => if Nat.eq_dec l j then Rabs (lam j) * c j else 0)).
    + rewrite rsum_point. destruct (lt_dec j r); [reflexivity | lia].
    + intros l _. destruct (Nat.eq_dec j l), (Nat.eq_dec l j); subst; try ring; lia.
Qed.

(** The [|T|] middle: [tridiagonal_abs_matvec_upper(|d|, |e|, v)] entry [i]
    of [n], the code's three rounded products and two rounded additions. *)
Definition tri_entry (n : nat) (d e v : nat -> R) (i : nat) : R :=
  let base := fl (Rabs (d i) * v i) in
  let s1 := if lt_dec (S i) n then fl (base + fl (Rabs (e i) * v (S i))) else base in
  match i with O => s1 | S k => fl (s1 + fl (Rabs (e k) * v k)) end.

Lemma trim_row_expand : forall n d e (v : nat -> R) i, (i < n)%nat ->
  mv n (mabs (trim d e)) v i
    = Rabs (d i) * v i + (if lt_dec (S i) n then Rabs (e i) * v (S i) else 0)
      + (match i with O => 0 | S k => Rabs (e k) * v k end).
Proof.
  intros n d e v i Hi. unfold mv, mabs.
  rewrite (rsum_ext n _ (fun j => (if Nat.eq_dec j i then Rabs (d i) * v i else 0)
                                 + (if Nat.eq_dec j (S i) then Rabs (e i) * v (S i) else 0)
                                 + (match i with O => 0 | S k => if Nat.eq_dec j k then Rabs (e k) * v k else 0 end))).
  - rewrite !rsum_add, !rsum_point. destruct (lt_dec i n); [|lia].
    destruct i as [|k]; [rewrite rsum_zero; ring|]. rewrite rsum_point. destruct (lt_dec k n); [ring | lia].
  - intros j Hj. unfold trim.
    destruct (Nat.eq_dec i j) as [<-|H1].
    + destruct (Nat.eq_dec i i); [|lia]. destruct (Nat.eq_dec i (S i)); [lia|].
      destruct i as [|k]; [ring|]. destruct (Nat.eq_dec (S k) k); [lia | ring].
    + destruct (Nat.eq_dec j i); [lia|].
      destruct (Nat.eq_dec (S i) j) as [<-|H2].
      * destruct (Nat.eq_dec (S i) (S i)); [|lia]. destruct i as [|k]; [ring|].
        destruct (Nat.eq_dec (S (S k)) k); [lia | ring].
      * destruct (Nat.eq_dec j (S i)); [lia|].
        destruct (Nat.eq_dec (S j) i) as [<-|H3].
        -- simpl. destruct (Nat.eq_dec j j); [ring | lia].
        -- rewrite Rabs_R0, Rmult_0_l. destruct i as [|k]; [ring|].
           destruct (Nat.eq_dec j k); [lia | ring].
Qed.

Theorem tridiagonal_middle_upper : forall n (d e v V : nat -> R) i,
  (i < n)%nat -> (forall j, (j < n)%nat -> 0 <= V j <= v j) ->
  mv n (mabs (trim d e)) V i <= inflate 3 (tri_entry n d e v i).
Proof.
  intros n d e v V i Hi HV.
  rewrite trim_row_expand by exact Hi.
  (* the code's tree and its pairs *)
  set (p0 := (Rabs (d i), v i)).
  set (o1 := if lt_dec (S i) n then [(Rabs (e i), v (S i))] else []).
  set (o2 := match i with O => [] | S k => [(Rabs (e k), v k)] end).
  set (t1 := if lt_dec (S i) n then DAdd (DProd (Rabs (d i)) (v i)) (DProd (Rabs (e i)) (v (S i)))
             else DProd (Rabs (d i)) (v i)).
  set (t := match i with O => t1 | S k => DAdd t1 (DProd (Rabs (e k)) (v k)) end).
  assert (Et : dfl t = tri_entry n d e v i).
  { unfold t, t1, tri_entry. destruct (lt_dec (S i) n); destruct i; reflexivity. }
  assert (Pt : dpairs t = p0 :: o1 ++ o2).
  { unfold t, t1, p0, o1, o2. destruct (lt_dec (S i) n); destruct i; reflexivity. }
  set (B0 := V i). set (Bo1 := if lt_dec (S i) n then [V (S i)] else []).
  set (Bo2 := match i with O => [] | S k => [V k] end).
  assert (HF : Forall (fun p => 0 <= fst p /\ 0 <= snd p) (p0 :: o1 ++ o2)).
  { unfold p0, o1, o2. pose proof (HV i Hi).
    constructor; [simpl; split; [apply Rabs_pos | lra]|]. apply Forall_app. split.
    - destruct (lt_dec (S i) n) as [Hs|]; constructor; [|constructor].
      simpl. pose proof (HV (S i) Hs). split; [apply Rabs_pos | lra].
    - destruct i as [|k]; constructor; [|constructor]. simpl. pose proof (HV k ltac:(lia)). split; [apply Rabs_pos | lra]. }
  assert (HF2 : Forall2 (fun p B => 0 <= fst p /\ 0 <= B <= snd p) (p0 :: o1 ++ o2) (B0 :: Bo1 ++ Bo2)).
  { unfold p0, o1, o2, B0, Bo1, Bo2. constructor; [simpl; split; [apply Rabs_pos | apply HV, Hi]|].
    apply Forall2_app.
    - destruct (lt_dec (S i) n) as [Hs|]; constructor; [|constructor]. simpl. split; [apply Rabs_pos | apply HV, Hs].
    - destruct i as [|k]; constructor; [|constructor]. simpl. split; [apply Rabs_pos | apply HV; lia]. }
  assert (Hlen : (1 <= length (p0 :: o1 ++ o2) <= 3)%nat).
  { unfold o1, o2. simpl. rewrite app_length. destruct (lt_dec (S i) n); destruct i; simpl; lia. }
  (* Lemma 2.2 with k = 3 >= the number of pairs *)
  set (L := length (p0 :: o1 ++ o2)).
  assert (HLu : INR L * u <= / 4) by (apply small_k; apply Rle_trans with (INR 3); [apply le_INR; unfold L; lia | simpl; lra]).
  pose proof (dot_nonneg_upper (p0 :: o1 ++ o2) t ltac:(rewrite Pt; apply Permutation_refl) HF HLu) as Hd.
  fold L in Hd.
  assert (HS : lsum (map (fun pB => fst (fst pB) * snd pB) (combine (p0 :: o1 ++ o2) (B0 :: Bo1 ++ Bo2)))
               = Rabs (d i) * V i + (if lt_dec (S i) n then Rabs (e i) * V (S i) else 0)
                 + (match i with O => 0 | S k => Rabs (e k) * V k end)).
  { unfold p0, o1, o2, B0, Bo1, Bo2. unfold lsum. destruct (lt_dec (S i) n); destruct i; simpl; ring. }
  unfold B0 at 1. rewrite <- HS.
  assert (Hle : lsum (map (fun pB => fst (fst pB) * snd pB) (combine (p0 :: o1 ++ o2) (B0 :: Bo1 ++ Bo2)))
                <= dot (p0 :: o1 ++ o2)).
  { unfold dot. clear -HF2. induction HF2 as [|p B ps Bs [Ha [H0 H1]] _ IH]; simpl; [lra|].
    unfold lsum in *. simpl. assert (fst p * B <= fst p * snd p) by (apply Rmult_le_compat_l; lra). lra. }
  assert (HS0 : 0 <= lsum (map (fun pB => fst (fst pB) * snd pB) (combine (p0 :: o1 ++ o2) (B0 :: Bo1 ++ Bo2)))).
  { clear -HF2. induction HF2 as [|p B ps Bs [Ha [H0 H1]] _ IH]; simpl; unfold lsum in *; simpl; [lra|].
    assert (0 <= fst p * B) by (apply Rmult_le_pos; lra). lra. }
  rewrite <- Et. apply inflate_upper.
  - lia.
  - simpl; lra.
  - apply dfl_format.
  - apply dfl_nonneg. rewrite Pt. exact HF.
  - exact HS0.
  - pose proof (gamma_mono L 3 ltac:(unfold L in *; lia) ltac:(pose proof (small_k 3 ltac:(simpl; lra)); lra)) as Gm.
    pose proof (gamma_small 3 (small_k 3 ltac:(simpl; lra))) as G3.
    pose proof eta_pos. assert (INR L <= INR 3) by (apply le_INR; unfold L in *; lia).
    eapply Rle_trans; [|exact Hd].
    assert ((1 - gamma 3) * lsum (map (fun pB => fst (fst pB) * snd pB) (combine (p0 :: o1 ++ o2) (B0 :: Bo1 ++ Bo2)))
            <= (1 - gamma L) * dot (p0 :: o1 ++ o2)).
    { pose proof (gamma_small L HLu). apply Rmult_le_compat; lra. }
    nra.
Qed.

(** The whole: [||N||_2] bounded by both of the code's quotient bounds. *)
Theorem abs_sandwich_rho_bound : forall m (N : nat -> nat -> R) (z1 z2 : nat -> R) r1 r2,
  (forall i j, (i < m)%nat -> (j < m)%nat -> N i j = N j i) ->
  (forall i j, (i < m)%nat -> (j < m)%nat -> 0 <= N i j) ->
  (forall i, (i < m)%nat -> 0 < z1 i) ->
  (forall i, (i < m)%nat -> mv m N (fun _ => 1) i <= z1 i) ->
  (forall i, (i < m)%nat -> mv m N z1 i <= z2 i) ->
  (forall i, (i < m)%nat -> z1 i <= r1) -> (forall i, (i < m)%nat -> fl (z2 i / z1 i) <= r2) ->
  (1 <= m)%nat ->
  opbound m m N ((r1 + eta) / (1 - u)) /\ opbound m m N ((r2 + eta) / (1 - u)).
Proof.
  intros m N z1 z2 r1 r2 Hs Hn Hz1 H1 H2 Hr1 Hr2 Hm.
  pose proof u_pos. pose proof u_lt_1. pose proof eta_pos.
  assert (Hr10 : 0 < r1) by (apply Rlt_le_trans with (z1 O); [apply Hz1 | apply Hr1]; lia).
  assert (Hc1 : r1 <= (r1 + eta) / (1 - u)).
  { apply Rmult_le_reg_r with (1 - u); [lra|]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. nra. }
  assert (Hz2 : forall i, (i < m)%nat -> 0 <= z2 i).
  { intros i Hi. eapply Rle_trans; [|apply H2, Hi]. unfold mv. apply rsum_nonneg. intros j Hj.
    apply Rmult_le_pos; [apply Hn; assumption | left; apply Hz1, Hj]. }
  split.
  - apply collatz_wielandt with (x := fun _ => 1); try assumption.
    + intros; lra.
    + lra.
    + intros i Hi. rewrite Rmult_1_r. eapply Rle_trans; [apply H1, Hi|]. eapply Rle_trans; [apply Hr1, Hi | exact Hc1].
  - apply collatz_wielandt with (x := z1); try assumption.
    + assert (Hr20 : 0 <= r2).
      { eapply Rle_trans; [|apply (Hr2 O ltac:(lia))]. apply fl_nonneg.
        apply div_nonneg; [apply Hz2; lia | apply Hz1; lia]. }
      apply div_nonneg; lra.
    + intros i Hi. eapply Rle_trans; [apply H2, Hi|].
      pose proof (quotient_max_upper (z2 i) (z1 i) r2 (Hz2 i Hi) (Hz1 i Hi) (Hr2 i Hi)) as Q.
      pose proof (Hz1 i Hi).
      apply Rmult_le_reg_r with (/ z1 i); [apply Rinv_0_lt_compat; lra|].
      rewrite Rmult_assoc, Rinv_r, Rmult_1_r by lra. exact Q.
Qed.

(** [_abs_sandwich_rho] then [_collatz_wielandt_step], composed: for a
    nonnegative symmetric [r x r] middle [M] ([|Lambda|]:
    [diagonal_middle_upper]; [|T|]: [tridiagonal_middle_upper]), the
    code's [z1 = _inflate(fl(|U| t), r)] with [t >= M c], [c >= |U|^T 1]
    ([colsum_upper_sum]), and [z2 = _inflate(fl(|U| t2), r)] with
    [t2 >= M y], [y >= |U|^T z1] ([colsum_upper_mv]) give both quotient
    bounds on [||N||_2 = rho(N)], [N = |U| M |U|^T]. *)
Theorem abs_sandwich_rho_sound : forall m r (U M : nat -> nat -> R) (c t y t2 : nat -> R) (tz1 tz2 : nat -> dtree) r1 r2,
  (1 <= m)%nat -> (1 <= r)%nat -> INR r <= 2 ^ 40 ->
  (forall j l, (j < r)%nat -> (l < r)%nat -> 0 <= M j l) -> symm r M ->
  (forall l, (l < r)%nat -> mv m (mtr (mabs U)) (fun _ => 1) l <= c l) ->
  (forall j, (j < r)%nat -> mv r M c j <= t j) ->
  (forall i, (i < m)%nat -> Permutation (dpairs (tz1 i)) (map (fun l => (mabs U i l, t l)) (seq 0 r))) ->
  (forall l, (l < r)%nat -> mv m (mtr (mabs U)) (fun i => inflate r (dfl (tz1 i))) l <= y l) ->
  (forall j, (j < r)%nat -> mv r M y j <= t2 j) ->
  (forall i, (i < m)%nat -> Permutation (dpairs (tz2 i)) (map (fun l => (mabs U i l, t2 l)) (seq 0 r))) ->
  (forall i, (i < m)%nat -> inflate r (dfl (tz1 i)) <= r1) ->
  (forall i, (i < m)%nat -> fl (inflate r (dfl (tz2 i)) / inflate r (dfl (tz1 i))) <= r2) ->
  let N := mmul r (mmul r (mabs U) M) (mtr (mabs U)) in
  opbound m m N ((r1 + eta) / (1 - u)) /\ opbound m m N ((r2 + eta) / (1 - u)).
Proof.
  intros m r U M c t y t2 tz1 tz2 r1 r2 Hm1 Hr1 Hr HM HsM Hc Ht Hp1 Hy Ht2 Hp2 Hr1' Hr2' N.
  set (z1 := fun i => inflate r (dfl (tz1 i))). set (z2 := fun i => inflate r (dfl (tz2 i))).
  assert (Hz1p : forall i, (i < m)%nat -> 0 < z1 i).
  { intros i Hi. unfold z1. apply inflate_pos; [|exact Hr].
    apply dfl_nonneg. eapply Permutation_Forall; [apply Permutation_sym, Hp1, Hi|].
    apply Forall_forall. intros p Hin. apply in_map_iff in Hin as (l & <- & Hl). apply in_seq0 in Hl.
    simpl. split; [unfold mabs; apply Rabs_pos|].
    eapply Rle_trans; [|apply Ht, Hl]. unfold mv. apply rsum_nonneg. intros j Hj.
    apply Rmult_le_pos; [apply HM; assumption|]. eapply Rle_trans; [|apply Hc, Hj].
    unfold mv, mtr, mabs. apply rsum_nonneg. intros; rewrite Rmult_1_r; apply Rabs_pos. }
  assert (H1 : forall i, (i < m)%nat -> mv m N (fun _ => 1) i <= z1 i).
  { intros i Hi. apply (sandwich_step m r U M (fun _ => 1) c t tz1); try assumption.
    intros l _. unfold mv, mtr, mabs. apply rsum_nonneg. intros; rewrite Rmult_1_r; apply Rabs_pos. }
  assert (H2 : forall i, (i < m)%nat -> mv m N z1 i <= z2 i).
  { intros i Hi. apply (sandwich_step m r U M z1 y t2 tz2); try assumption.
    intros l _. unfold mv, mtr, mabs. apply rsum_nonneg. intros i' Hi'.
    apply Rmult_le_pos; [apply Rabs_pos | left; apply Hz1p, Hi']. }
  apply (abs_sandwich_rho_bound m N z1 z2 r1 r2); try assumption.
  - intros i j _ _. unfold N, mmul, mtr.
    rewrite (rsum_ext r _ (fun s => rsum r (fun l => mabs U i l * M l s * mabs U j s))) by (intros; apply rsum_mulr).
    rewrite (rsum_ext r (fun s => rsum r (fun l => mabs U j l * M l s) * mabs U i s)
               (fun s => rsum r (fun l => mabs U j l * M l s * mabs U i s))) by (intros; apply rsum_mulr).
    rewrite (rsum_swap r r (fun s l => mabs U j l * M l s * mabs U i s)).
    apply rsum_ext. intros s Hs. apply rsum_ext. intros l Hl. rewrite (HsM l s Hl Hs). ring.
  - intros i j _ _. unfold N, mmul, mtr, mabs. apply rsum_nonneg. intros l Hl.
    apply Rmult_le_pos; [|apply Rabs_pos]. apply rsum_nonneg. intros k Hk.
    apply Rmult_le_pos; [apply Rabs_pos | apply HM; assumption].
Qed.
