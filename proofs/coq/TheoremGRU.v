(** * Theorem G-R with the float [U~_j] in [Q_j] (session 8: f52f59a)

    Backs [proofs/enclosure-reconstruct.md] §2 (Lemma R.1′), §3 (Lemma R.3
    in its session-8 form) and §4 (Theorem G-R); code:
    [certbound/enclose/reconstruct.py] ([_static_bounds]: [eps0], [nue],
    [eps]; [_bounds]: [inner], [delta]; [reconstruction_bounds]).

    Since f52f59a the exact matrix is [Q_j := I - Vbar_j Ubar_j^T] with the
    FLOAT [U~_j = fl(V_j T_j^T)] (one stacked product), not
    [I - Vbar_j T_j Vbar_j^T] ([TheoremGR.v]'s [lemma_r3], [theorem_gr_float],
    [R4Support.v] and [GRTable.gr_block_float] are about that session-7
    form).  Here, for ANY real matrices:

    - Lemma R.1′ ([lemma_r1_u]): with [Q0 = I - V T V^T],
      [||Q0^T Q0 - I|| <= eps0], [||V|| <= nu], [||U - V T^T|| <= eU]:
      [||Q^T Q - I|| <= eps0 + 2 sqrt(1 + eps0) nu eU + (nu eU)^2] for
      [Q = I - V U^T] ([Q = Q0 - V E_U^T]); its float form [gr_eps_u_float];
    - Lemma R.3 ([lemma_r3_u]): [Y = XU + E_Y], [M = U^T Y + E_M],
      [H = VM + E_H], [W = Y - H/2 + E_W], [X' = X - VW^T - WV^T + E_5]:
      [Delta_W = (E_Y + Q E_Y)/2 - V E_M/2 - E_H/2 + E_W] ([lemma_r3_u_dw]),
      [X' - Q X Q^T = E_5 - V Delta_W^T - Delta_W V^T] ([lemma_r3_u_split]),
      so [||X' - Q X Q^T|| <= e5 + 2 nu (h eY + nu eM/2 + eH/2 + eW)],
      [h = (1 + sqrt(1 + eps))/2]; its float form [gr_delta_u_float];
    - [theorem_gr_u_float]: Theorem G-R from the code's floats with these
      [Q_j] ([TheoremGR.theorem_gr_matrix] holds for any [Q_j]).

    The table rows of [GRTable.v] still apply: [eY] ([gr_eY_float] with
    [U := U~]), [eM] is [gr_eZ_float] with [V := U~], [aV := aU], [eH],
    [eW], [e5] unchanged, [eU] ([gr_eU_float], now entering [eps]). *)

From Coq Require Import Reals Psatz FunctionalExtensionality.
From Flocq Require Import Core.
From Certbound Require Import FPModel OneStep NormBounds Lemma112 TheoremGFloat CourantFischer TheoremGR.
Open Scope R_scope.

Local Notation succ := (succ radix2 fexp).

(** ** Lemma R.1′ *)
Theorem lemma_r1_u : forall n b (V T U : nat -> nat -> R) eps0 nu eU,
  let Q0 := msub idm (mmul b (mmul b V T) (mtr V)) in
  let Q := msub idm (mmul b V (mtr U)) in
  opbound n n (fun a c => mmul n (mtr Q0) Q0 a c - idm a c) eps0 -> 0 <= eps0 ->
  opbound n b V nu -> opbound n b (msub U (mmul b V (mtr T))) eU ->
  opbound n n (fun a c => mmul n (mtr Q) Q a c - idm a c) (eps0 + 2 * sqrt (1 + eps0) * nu * eU + (nu * eU) * (nu * eU)).
Proof.
  intros n b V T U eps0 nu eU Q0 Q H0 He0 HV HU.
  set (EU := msub U (mmul b V (mtr T))). set (D := mmul b V (mtr EU)).
  assert (EQ : Q = msub Q0 D).
  { unfold Q, Q0, D, EU. mnorm. do 2 (apply functional_extensionality; intros). unfold msub. ring. }
  assert (HQ0 : opbound n n Q0 (sqrt (1 + eps0))) by (apply block_norm; assumption).
  assert (HD : opbound n n D (nu * eU)) by (apply opbound_mul; [exact HV|apply opbound_transpose, HU]).
  assert (Hnu : 0 <= nu) by (destruct HV; assumption). assert (HeU : 0 <= eU) by (destruct HU; assumption).
  apply (opbound_ext n n (madd (madd (madd (fun a c => mmul n (mtr Q0) Q0 a c - idm a c)
                                            (mscal (-1) (mmul n (mtr Q0) D))) (mscal (-1) (mmul n (mtr D) Q0)))
                              (mmul n (mtr D) D))).
  - intros a c Ha Hc. rewrite EQ. unfold madd, mscal. mnorm. unfold msub. ring.
  - assert (Hm1 : Rabs (-1) = 1) by (unfold Rabs; destruct (Rcase_abs (-1)); lra).
    replace (eps0 + 2 * sqrt (1 + eps0) * nu * eU + nu * eU * (nu * eU))
      with (eps0 + Rabs (-1) * (sqrt (1 + eps0) * (nu * eU)) + Rabs (-1) * ((nu * eU) * sqrt (1 + eps0))
            + (nu * eU) * (nu * eU)) by (rewrite Hm1; ring).
    apply opbound_madd; [apply opbound_madd; [apply opbound_madd|]|].
    + exact H0.
    + apply opbound_mscal, opbound_mul; [apply opbound_transpose, HQ0|exact HD].
    + apply opbound_mscal, opbound_mul; [apply opbound_transpose, HD|exact HQ0].
    + apply opbound_mul; [apply opbound_transpose, HD|exact HD].
Qed.

(** [_static_bounds]: [nue = up(nu eU)],
    [eps = up(up(eps0 + up(2 up(up(sqrt(up(1 + eps0))) nue))) + up(nue nue))]. *)
Theorem gr_eps_u_float : forall eps0 nu eU eps0f nuf eUf,
  0 <= eps0 <= eps0f -> 0 <= nu <= nuf -> 0 <= eU <= eUf ->
  let nue := succ (fl (nuf * eUf)) in
  eps0 + 2 * sqrt (1 + eps0) * nu * eU + (nu * eU) * (nu * eU)
    <= succ (fl (succ (fl (eps0f + succ (fl (2 * succ (fl (succ (fl (sqrt (succ (fl (1 + eps0f))))) * nue))))))
                 + succ (fl (nue * nue)))).
Proof.
  intros eps0 nu eU eps0f nuf eUf H0 Hnu HU nue.
  assert (Hne : 0 <= nu * eU <= nue) by (split; [nra|apply up_mul; lra]).
  assert (Hs : 0 <= sqrt (1 + eps0) <= succ (fl (sqrt (succ (fl (1 + eps0f)))))).
  { split; [apply sqrt_pos|]. apply up_sqrt, up_add; lra. }
  replace (eps0 + 2 * sqrt (1 + eps0) * nu * eU + nu * eU * (nu * eU))
    with (eps0 + 2 * (sqrt (1 + eps0) * (nu * eU)) + (nu * eU) * (nu * eU)) by ring.
  apply up_add; [apply up_add; [lra|]|apply up_mul; lra].
  apply up_mul; [lra|]. split; [nra|]. apply up_mul; lra.
Qed.

(** ** Lemma R.3, session-8 form *)
Section LemmaR3U.
Variables (n b : nat) (X V U Y M H W Xp : nat -> nat -> R).
Hypothesis X_symm : forall i j, X i j = X j i.
Variables (nu eps eY eM eH eW e5 : R).

Let P := mmul b V (mtr U).
Let Q := msub idm P.
Let Y0 := mmul n X U.
Let M0 := mmul n (mtr U) Y0.
Let EY := msub Y (mmul n X U).
Let EM := msub M (mmul n (mtr U) Y).
Let EH := msub H (mmul b V M).
Let EW := msub W (msub Y (mscal (/ 2) H)).
Let E5 := msub Xp (msub (msub X (mmul b V (mtr W))) (mmul b W (mtr V))).
Let DW := madd (msub W Y0) (mscal (/ 2) (mmul b V M0)).

Lemma X_tr_u : mtr X = X.
Proof. do 2 (apply functional_extensionality; intros). unfold mtr. apply X_symm. Qed.

Lemma lemma_r3_u_dw : forall a l, (a < n)%nat ->
  DW a l = / 2 * (EY a l + mmul n Q EY a l) - / 2 * mmul b V EM a l - / 2 * EH a l + EW a l.
Proof.
  intros a l Ha. unfold Q. rewrite mmul_msub_l_f. unfold msub at 1.
  rewrite mmul_idm_l by exact Ha.
  unfold DW, EY, EM, EH, EW, P, M0, Y0. mnorm.
  unfold msub, madd, mscal. field.
Qed.

Lemma congr_expand_u : forall a c, (a < n)%nat -> (c < n)%nat ->
  mmul n (mmul n Q X) (mtr Q) a c = X a c - mmul n P X a c - mmul n X (mtr P) a c + mmul n (mmul n P X) (mtr P) a c.
Proof.
  intros a c Ha Hc. unfold Q. repeat rewrite ?mmul_msub_l_f, ?mtr_msub_f, ?mmul_msub_r_f. unfold msub.
  rewrite (mmul_idm_tr n (mmul n idm X)) by exact Hc. rewrite (mmul_idm_tr n (mmul n P X)) by exact Hc.
  rewrite (mmul_idm_l n X) by exact Ha.
  rewrite (mmul_ext_l n (mmul n idm X) X (mtr P) a c) by (intros; apply mmul_idm_l; exact Ha). ring.
Qed.

Lemma lemma_r3_u_split : forall a c, (a < n)%nat -> (c < n)%nat ->
  Xp a c - mmul n (mmul n Q X) (mtr Q) a c = E5 a c - mmul b V (mtr DW) a c - mmul b DW (mtr V) a c.
Proof.
  intros a c Ha Hc. rewrite congr_expand_u by assumption.
  unfold E5, DW, P, M0, Y0. mnorm. rewrite ?X_tr_u. mnorm.
  unfold msub, madd, mscal. field.
Qed.

Hypothesis V_bound : opbound n b V nu.
Hypothesis Q_bound : opbound n n (fun a c => mmul n (mtr Q) Q a c - idm a c) eps.
Hypothesis EY_bound : opbound n b EY eY.
Hypothesis EM_bound : opbound b b EM eM.
Hypothesis EH_bound : opbound n b EH eH.
Hypothesis EW_bound : opbound n b EW eW.
Hypothesis E5_bound : opbound n n E5 e5.
Hypothesis eps_nonneg : 0 <= eps.

Theorem lemma_r3_u :
  opbound n n (fun a c => Xp a c - mmul n (mmul n Q X) (mtr Q) a c)
    (e5 + 2 * nu * (/ 2 * (1 + sqrt (1 + eps)) * eY + / 2 * nu * eM + / 2 * eH + eW)).
Proof.
  assert (Hnu : 0 <= nu) by (destruct V_bound; assumption).
  assert (HQ : opbound n n Q (sqrt (1 + eps))) by (apply block_norm; assumption).
  assert (Hh : opbound n n (mscal (/ 2) (madd idm Q)) (/ 2 * (1 + sqrt (1 + eps)))).
  { rewrite <- (Rabs_pos_eq (/ 2)) at 2 by lra. apply opbound_mscal, opbound_madd; [apply opbound_idm|exact HQ]. }
  set (dw := / 2 * (1 + sqrt (1 + eps)) * eY + / 2 * nu * eM + / 2 * eH + eW).
  assert (HDW : opbound n b DW dw).
  { apply (opbound_ext n b (madd (madd (madd (mmul n (mscal (/ 2) (madd idm Q)) EY)
                                            (mscal (- / 2) (mmul b V EM)))
                                      (mscal (- / 2) EH)) EW)).
    - intros p q Hp Hq. rewrite lemma_r3_u_dw by exact Hp. rewrite mmul_mscal_l_f, mmul_madd_l_f.
      unfold mscal, madd. rewrite mmul_idm_l by exact Hp. field.
    - replace dw with (/ 2 * (1 + sqrt (1 + eps)) * eY + Rabs (- / 2) * (nu * eM)
                       + Rabs (- / 2) * eH + eW) by (rewrite Rabs_mhalf; unfold dw; ring).
      apply opbound_madd; [apply opbound_madd; [apply opbound_madd|]|exact EW_bound].
      + apply opbound_mul; assumption.
      + apply opbound_mscal. apply opbound_mul; assumption.
      + apply opbound_mscal. exact EH_bound. }
  apply (opbound_ext n n (madd E5 (mscal (-1) (madd (mmul b V (mtr DW)) (mmul b DW (mtr V)))))).
  - intros p q Hp Hq. rewrite lemma_r3_u_split by assumption. unfold madd, mscal. ring.
  - assert (Hm1 : Rabs (-1) = 1) by (unfold Rabs; destruct (Rcase_abs (-1)); lra).
    replace (e5 + 2 * nu * dw) with (e5 + Rabs (-1) * (nu * dw + dw * nu)) by (rewrite Hm1; ring).
    apply opbound_madd; [exact E5_bound|]. apply opbound_mscal.
    apply opbound_madd; apply opbound_mul; [exact V_bound|apply opbound_transpose; exact HDW|exact HDW|apply opbound_transpose; exact V_bound].
Qed.

End LemmaR3U.

(** [_bounds]: [inner = up(up(up(hq eY) + up(1/2 up(nu eM))) + up(up(1/2 eH) + eW))],
    [delta = up(e5 + up(2 up(nu inner)))], [hq = up(1/2 up(1 + up(sqrt(up(1 + eps)))))]. *)
Theorem gr_delta_u_float : forall e5 nu eps eY eM eH eW e5f nuf epsf eYf eMf eHf eWf,
  0 <= e5 <= e5f -> 0 <= nu <= nuf -> 0 <= eps <= epsf ->
  0 <= eY <= eYf -> 0 <= eM <= eMf -> 0 <= eH <= eHf -> 0 <= eW <= eWf ->
  let hq := succ (fl (/ 2 * succ (fl (1 + succ (fl (sqrt (succ (fl (1 + epsf))))))))) in
  let inner := succ (fl (succ (fl (succ (fl (hq * eYf)) + succ (fl (/ 2 * succ (fl (nuf * eMf))))))
                         + succ (fl (succ (fl (/ 2 * eHf)) + eWf)))) in
  e5 + 2 * nu * (/ 2 * (1 + sqrt (1 + eps)) * eY + / 2 * nu * eM + / 2 * eH + eW)
    <= succ (fl (e5f + succ (fl (2 * succ (fl (nuf * inner)))))).
Proof.
  intros e5 nu eps eY eM eH eW e5f nuf epsf eYf eMf eHf eWf H5 Hnu Heps HY HM HH HW hq inner.
  assert (Hs : 0 <= sqrt (1 + eps) <= succ (fl (sqrt (succ (fl (1 + epsf)))))).
  { split; [apply sqrt_pos|]. apply up_sqrt, up_add; lra. }
  assert (Hq : 0 <= / 2 * (1 + sqrt (1 + eps)) <= hq).
  { split; [apply Rmult_le_pos; lra|]. apply up_mul; [lra|]. split; [lra|]. apply up_add; lra. }
  assert (Hi2 : 0 <= / 2 * nu * eM <= succ (fl (/ 2 * succ (fl (nuf * eMf))))).
  { split; [apply Rmult_le_pos; [apply Rmult_le_pos|]; lra|]. rewrite Rmult_assoc.
    apply up_mul; [lra|]. split; [nra|]. apply up_mul; lra. }
  assert (Hi3 : 0 <= / 2 * eH + eW <= succ (fl (succ (fl (/ 2 * eHf)) + eWf))).
  { split; [nra|]. apply up_add; [apply up_mul|]; lra. }
  assert (Hin : 0 <= / 2 * (1 + sqrt (1 + eps)) * eY + / 2 * nu * eM + / 2 * eH + eW <= inner).
  { split; [nra|]. unfold inner.
    replace (/ 2 * (1 + sqrt (1 + eps)) * eY + / 2 * nu * eM + / 2 * eH + eW)
      with (/ 2 * (1 + sqrt (1 + eps)) * eY + / 2 * nu * eM + (/ 2 * eH + eW)) by ring.
    apply up_add; [|lra]. apply up_add; [apply up_mul|]; lra. }
  apply up_add; [lra|].
  replace (2 * nu * (/ 2 * (1 + sqrt (1 + eps)) * eY + / 2 * nu * eM + / 2 * eH + eW))
    with (2 * (nu * (/ 2 * (1 + sqrt (1 + eps)) * eY + / 2 * nu * eM + / 2 * eH + eW))) by ring.
  apply up_mul; [lra|]. split; [nra|]. apply up_mul; lra.
Qed.

(** ** Theorem G-R from the code's floats, session-8 [Q_j]

    As [TheoremGR.theorem_gr_float], with [Q_j = I - V_j U_j^T] ([Us j] the
    float [U~_j], embedded like [Vs j]), [eps_j] by Lemma R.1′ from Lemma
    R.1's [eps0_j] and [eU_j >= ||U_j - V_j T_j^T||_2] ([GRTable.gr_eU_float]),
    [nu_j = up(sqrt(up(s2_j + eS_j)))]. *)
Theorem theorem_gr_u_float : forall k n (bs : nat -> nat) K (W Gh T : nat -> nat -> R)
    (Vs Us Ts Rs Ss X : nat -> nat -> nat -> R)
    (t2 F eSf s2 eUf deltaf la lb : nat -> R) cap r beta c grow shrink i,
  (1 <= k)%nat -> (i < k)%nat -> symm k T ->
  (forall p, (p < k)%nat -> la p <= cf_eig k T p <= lb p) ->
  (forall j, forall p q, (p < bs j)%nat -> (q < bs j)%nat -> Ss j p q = Rs j p q + Rs j q p) ->
  (forall j, opbound (bs j) (bs j) (Ts j) (t2 j)) ->
  (forall j, opbound (bs j) (bs j) (fun p q => mmul (bs j) (Rs j) (Ts j) p q - idm p q) (F j)) ->
  (forall j, opbound (bs j) (bs j) (fun p q => mmul k (mtr (Vs j)) (Vs j) p q - Ss j p q) (eSf j)) ->
  (forall j, opbound (bs j) (bs j) (Ss j) (s2 j)) ->
  (forall j, opbound k (bs j) (msub (Us j) (mmul (bs j) (Vs j) (mtr (Ts j)))) (eUf j)) ->
  let eps0f := fun j => succ (fl (succ (fl (succ (fl (2 * succ (fl (t2 j * F j)))) + succ (fl (succ (fl (t2 j * t2 j)) * eSf j))))
                                  * succ (fl (s2 j + eSf j)))) in
  let nuf := fun j => succ (fl (sqrt (succ (fl (s2 j + eSf j))))) in
  let epsf := fun j => let nue := succ (fl (nuf j * eUf j)) in
      succ (fl (succ (fl (eps0f j + succ (fl (2 * succ (fl (succ (fl (sqrt (succ (fl (1 + eps0f j))))) * nue))))))
                + succ (fl (nue * nue)))) in
  let Qs := fun j a c => idm a c - mmul (bs j) (Vs j) (mtr (Us j)) a c in
  (forall j, epsf j < 1) ->
  let Pr := prf epsf K in
  Pr < 2 ->
  (forall j, 0 <= deltaf j) ->
  (forall p q, (p < k)%nat -> (q < k)%nat -> X K p q = T p q) ->
  (forall j, (j < K)%nat ->
     opbound k k (fun p q => X (S j) p q - mmul k (mmul k (qprod k Qs (S j) (K - S j)) T)
                                                (mtr (qprod k Qs (S j) (K - S j))) p q) cap ->
     opbound k k (fun p q => X j p q - mmul k (mmul k (Qs j) (X (S j))) (mtr (Qs j)) p q) (deltaf j)) ->
  succ (fl (Pr * totf deltaf K)) <= cap ->
  opbound k k (fun p q => Gh p q - X O p q) r ->
  let alpha := fl (Pr - 1) in
  let ebar := succ (fl (r + succ (fl (Pr * totf deltaf K)))) in
  opbound k k (fun p q => Gh p q - mmul n W (mtr W) p q) beta ->
  beta + ebar <= c -> 1 + alpha <= grow -> 0 <= shrink <= 1 - alpha ->
  g_lower_end la c grow shrink i <= sqrt (cf_eig k (mmul n W (mtr W)) i) <= g_upper_end lb c grow shrink i.
Proof.
  intros k n bs K W Gh T Vs Us Ts Rs Ss X t2 F eSf s2 eUf deltaf la lb cap r beta c grow shrink i
    Hk Hi HT Hbr Hsplit HTb HFb HEb HSb HUb eps0f nuf epsf Qs Heps1 Pr HPr HDl HXK HD Hacc HG alpha ebar HB Hc Hg Hs.
  assert (Hnn : forall j, 0 <= t2 j /\ 0 <= F j /\ 0 <= eSf j /\ 0 <= s2 j /\ 0 <= eUf j).
  { intros j. destruct (HTb j), (HFb j), (HEb j), (HSb j), (HUb j). repeat split; assumption. }
  assert (Hblk : forall j, opbound k k (fun a c => mmul k (mtr (Qs j)) (Qs j) a c - idm a c) (epsf j)).
  { intros j. destruct (Hnn j) as (H1 & H2 & H3 & H4 & H5).
    destruct (lemma_r1 k (bs j) (Vs j) (Ts j) (Rs j) (Ss j) (t2 j) (F j) (eSf j) (s2 j) (Hsplit j) (HTb j) (HFb j) (HEb j) (HSb j))
      as [HR1 HV].
    destruct (gr_eps_float (t2 j) (F j) (eSf j) (s2 j) (t2 j) (F j) (eSf j) (s2 j)) as [E0 Enu]; try lra.
    fold (eps0f j) in E0. fold (nuf j) in Enu.
    assert (HR1' : opbound k k (fun a c => mmul k (mtr (msub idm (mmul (bs j) (mmul (bs j) (Vs j) (Ts j)) (mtr (Vs j)))))
                                              (msub idm (mmul (bs j) (mmul (bs j) (Vs j) (Ts j)) (mtr (Vs j)))) a c - idm a c)
                             (eps0f j)) by (apply (opbound_weaken _ _ _ _ _ HR1); exact E0).
    assert (HV' : opbound k (bs j) (Vs j) (nuf j)) by (apply (opbound_weaken _ _ _ _ _ HV); exact Enu).
    assert (He0 : 0 <= eps0f j) by (destruct HR1'; assumption).
    pose proof (lemma_r1_u k (bs j) (Vs j) (Ts j) (Us j) (eps0f j) (nuf j) (eUf j) HR1' He0 HV' (HUb j)) as HQ.
    apply (opbound_ext k k (fun a c => mmul k (mtr (msub idm (mmul (bs j) (Vs j) (mtr (Us j)))))
                                         (msub idm (mmul (bs j) (Vs j) (mtr (Us j)))) a c - idm a c)); [reflexivity|].
    apply (opbound_weaken _ _ _ _ _ HQ). unfold epsf.
    destruct HV' as [Hnu0 _].
    apply (gr_eps_u_float (eps0f j) (nuf j) (eUf j) (eps0f j) (nuf j) (eUf j)); lra. }
  assert (Heps : forall j, 0 <= epsf j <= 1).
  { intros j. split; [destruct (Hblk j); assumption|]. specialize (Heps1 j). lra. }
  destruct (gr_product_float epsf epsf K) as (HP1 & HP2 & HPf); [intros j; split; [apply Heps|lra]|].
  fold Pr in HP1, HP2, HPf.
  assert (Ealpha : alpha = Pr - 1) by (apply gr_alpha_exact; [exact HPf|lra]).
  assert (Htot : Pr * rsum K deltaf <= succ (fl (Pr * totf deltaf K))) by (apply gr_total_float; [exact HDl|lra]).
  assert (Hebar : r + Pr * rsum K deltaf <= ebar).
  { unfold ebar. apply up_add; lra. }
  rewrite Ealpha in Hg, Hs.
  apply (theorem_gr_matrix k n K W Gh T Qs X epsf deltaf la lb Pr cap r beta c grow shrink i Hk Hi HT Hbr Heps Hblk HP1);
    try assumption; lra.
Qed.
