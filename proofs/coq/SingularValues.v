(** * Singular values by Courant-Fischer: Weyl (F1), the product bounds (F3), Theorem R

    [sing m n A i := sqrt(cf_eig n (A^T A) i)] is the [i]-th singular value
    of the [m x n] matrix [A] ([CourantFischer.v]).  Proved here:
    - F1 ([sing_weyl]): [|sigma_i(A) - sigma_i(B)| <= ||A - B||_2];
    - the multiplicative comparison of min-max values ([eig_mul_upper],
      [eig_mul_lower]): [x^T A x <= c x^T B x] for all [x] gives
      [lambda_i(A) <= c lambda_i(B)], and dually;
    - F3 with [enclosure.md] §1(b) for [Wt = X diag(s) Y^T]
      ([product_sing_bounds]): [||X^T X - I|| <= alpha], [||Y^T Y - I|| <= beta]
      give [sqrt((1-alpha)(1-beta)) s_(i) <= sigma_i(Wt) <= sqrt((1+alpha)(1+beta)) s_(i)],
      [s_(i)] the [i]-th largest [|s_j|];
    - Theorem R at the matrix level ([theorem_r_matrix]): [TheoremR.theorem_r]
      with its hypotheses F1, F2, F3 discharged. *)

From Coq Require Import Reals Psatz List Permutation.
From Certbound Require Import NormBounds Lemma112 CourantFischer TheoremGR TheoremR.
Open Scope R_scope.

Definition sing (m n : nat) (A : nat -> nat -> R) (i : nat) : R := sqrt (cf_eig n (mmul m (mtr A) A) i).

Lemma rq_gram : forall m n A x, rq n (mmul m (mtr A) A) x = nsq m (mv n A x) / nsq n x.
Proof.
  intros. unfold rq. change (mmul m (mtr A) A) with (mmul m (mtr A) (mtr (mtr A))). rewrite quad_gram. reflexivity.
Qed.

Lemma gram_eig_nonneg : forall m n A i, (i < n)%nat -> 0 <= cf_eig n (mmul m (mtr A) A) i.
Proof.
  intros m n A i Hi. change (mmul m (mtr A) A) with (mmul m (mtr A) (mtr (mtr A))). apply cf_gram_psd, Hi.
Qed.

(** Minkowski: [||u + v|| <= ||u|| + ||v||]. *)
Lemma minkowski : forall n u v, sqrt (nsq n (fun a => u a + v a)) <= sqrt (nsq n u) + sqrt (nsq n v).
Proof.
  intros n u v. pose proof (nsq_nonneg n u). pose proof (nsq_nonneg n v).
  apply sq_le_of_sqrt; [apply Rplus_le_le_0_compat; apply sqrt_pos|apply nsq_nonneg|].
  rewrite (nsq_ext n _ (fun a => u a + 1 * v a)) by (intros; ring). rewrite nsq_comb.
  pose proof (cauchy_schwarz n u v) as CS. fold (nsq n u) (nsq n v) in CS. fold (dotp n u v) in CS.
  assert (Hd : dotp n u v <= sqrt (nsq n u) * sqrt (nsq n v)).
  { destruct (Rle_or_lt (dotp n u v) 0) as [Hn|Hn]; [pose proof (sqrt_pos (nsq n u)); pose proof (sqrt_pos (nsq n v)); nra|].
    rewrite <- sqrt_mult by assumption. apply sqrt_le_of_sq; [lra|nra|]. simpl. nra. }
  pose proof (sqrt_sqrt (nsq n u) H) as Eu. pose proof (sqrt_sqrt (nsq n v) H0) as Ev.
  simpl. nra.
Qed.

Lemma le_eps1 : forall a b c, 0 <= c -> (forall d, 0 < d <= 1 -> a <= b + c * d) -> a <= b.
Proof.
  intros a b c Hc H. apply (le_eps a b c Hc). intros d Hd. destruct (Rle_or_lt d 1) as [H1|H1].
  - apply H. lra.
  - specialize (H 1 ltac:(lra)). nra.
Qed.

(** ** F1: Weyl's inequality for singular values *)
Lemma sing_weyl_le : forall m n A B c i, (i < n)%nat -> opbound m n (fun a b => A a b - B a b) c ->
  sing m n A i <= sing m n B i + c.
Proof.
  intros m n A B c i Hi [Hc HE]. unfold sing.
  set (lb := cf_eig n (mmul m (mtr B) B) i).
  assert (Hlb : 0 <= lb) by apply gram_eig_nonneg, Hi.
  apply sq_le_of_sqrt; [pose proof (sqrt_pos lb); lra|apply gram_eig_nonneg, Hi|].
  apply eig_le; [exact Hi|]. intros V HV.
  (* for x = V y: ||A x|| <= ||B x|| + c ||x|| *)
  assert (Hx : forall y, 0 < nsq n (mv (S i) V y) ->
    rq n (mmul m (mtr A) A) (mv (S i) V y) <= (sqrt (rq n (mmul m (mtr B) B) (mv (S i) V y)) + c) ^ 2).
  { intros y Hy. set (x := mv (S i) V y) in *. rewrite !rq_gram.
    assert (Hmk : sqrt (nsq m (mv n A x)) <= sqrt (nsq m (mv n B x)) + c * sqrt (nsq n x)).
    { rewrite (nsq_ext m (mv n A x) (fun a => mv n B x a + mv n (fun a b => A a b - B a b) x a))
        by (intros; rewrite mv_sub; ring).
      eapply Rle_trans; [apply minkowski|]. apply Rplus_le_compat_l.
      rewrite <- (sqrt_pow2 c Hc), <- sqrt_mult by (try apply pow2_ge_0; apply nsq_nonneg).
      apply sqrt_le_1_alt. simpl. rewrite Rmult_1_r. apply HE. }
    assert (Hsq : sqrt (nsq m (mv n A x) / nsq n x) = sqrt (nsq m (mv n A x)) / sqrt (nsq n x))
      by (apply sqrt_div_alt; exact Hy).
    assert (Hsq2 : sqrt (nsq m (mv n B x) / nsq n x) = sqrt (nsq m (mv n B x)) / sqrt (nsq n x))
      by (apply sqrt_div_alt; exact Hy).
    assert (Hpos : 0 < sqrt (nsq n x)) by (apply sqrt_lt_R0, Hy).
    rewrite Hsq2. rewrite <- (sqrt_sqrt (nsq m (mv n A x) / nsq n x)) by (apply div_nonneg; [apply nsq_nonneg|exact Hy]).
    rewrite Hsq.
    assert (H1 : sqrt (nsq m (mv n A x)) / sqrt (nsq n x) <= sqrt (nsq m (mv n B x)) / sqrt (nsq n x) + c).
    { apply (Rmult_le_reg_r (sqrt (nsq n x))); [exact Hpos|]. rewrite Rmult_plus_distr_r.
      unfold Rdiv. rewrite !Rmult_assoc, Rinv_l, !Rmult_1_r by lra. lra. }
    assert (H0 : 0 <= sqrt (nsq m (mv n A x)) / sqrt (nsq n x))
      by (apply div_nonneg; [apply sqrt_pos|exact Hpos]).
    simpl. rewrite Rmult_1_r. nra. }
  apply (le_eps1 _ _ (2 * (sqrt lb + c) + 1)); [pose proof (sqrt_pos lb); lra|]. intros d Hd.
  destruct (inf_approx (fun t => exists y, 0 < nsq n (mv (S i) V y) /\ t = rq n (mmul m (mtr B) B) (mv (S i) V y))
              (- absum n (mmul m (mtr B) B)) (d * d)) as (t & (y & Hy & ->) & Ht).
  { intros t Ht. apply (low_set_bound n (S i) _ V t Ht). }
  { eexists. exists (eunit O). split; [apply indep_nonempty, HV|reflexivity]. }
  { nra. }
  fold (low n (S i) (mmul m (mtr B) B) V) in Ht.
  pose proof (eig_ge n (mmul m (mtr B) B) i V HV) as Hge. fold lb in Hge.
  pose proof (low_le n (S i) (mmul m (mtr A) A) V y Hy) as Hl.
  pose proof (Hx y Hy) as Hxy.
  set (r := rq n (mmul m (mtr B) B) (mv (S i) V y)) in *.
  assert (Hr0 : 0 <= r) by (unfold r; rewrite rq_gram; apply div_nonneg; [apply nsq_nonneg|exact Hy]).
  assert (Hsr : sqrt r <= sqrt lb + d).
  { apply sq_le_of_sqrt; [pose proof (sqrt_pos lb); lra|exact Hr0|].
    simpl. rewrite Rmult_1_r. pose proof (sqrt_pos lb).
    replace ((sqrt lb + d) * (sqrt lb + d)) with (sqrt lb * sqrt lb + 2 * sqrt lb * d + d * d) by ring.
    rewrite sqrt_sqrt by exact Hlb. nra. }
  pose proof (sqrt_pos r). pose proof (sqrt_pos lb).
  assert (Hsq : (sqrt r + c) ^ 2 <= (sqrt lb + c) ^ 2 + (2 * (sqrt lb + c) + 1) * d).
  { assert (H3 : sqrt r + c <= sqrt lb + c + d) by lra.
    assert (H4 : (sqrt r + c) * (sqrt r + c) <= (sqrt lb + c + d) * (sqrt lb + c + d))
      by (apply Rmult_le_compat; lra).
    simpl. rewrite !Rmult_1_r. nra. }
  lra.
Qed.

Theorem sing_weyl : forall m n A B c i, (i < n)%nat -> opbound m n (fun a b => A a b - B a b) c ->
  Rabs (sing m n A i - sing m n B i) <= c.
Proof.
  intros m n A B c i Hi H. apply Rabs_le. split.
  - enough (sing m n B i <= sing m n A i + c) by lra. apply sing_weyl_le; [exact Hi|].
    apply (opbound_ext m n (fun a b => (-1) * (A a b - B a b))); [intros; ring|].
    assert (Hm1 : Rabs (-1) = 1) by (unfold Rabs; destruct (Rcase_abs (-1)); lra).
    pose proof (opbound_scal m n _ c (-1) H) as Hs. rewrite Hm1, Rmult_1_l in Hs. exact Hs.
  - pose proof (sing_weyl_le m n A B c i Hi H). lra.
Qed.

(** ** Multiplicative comparison of min-max values *)
Lemma rq_le_mul : forall n A B c x, 0 < nsq n x -> qform n A x <= c * qform n B x -> rq n A x <= c * rq n B x.
Proof.
  intros n A B c x Hx H. unfold rq. unfold Rdiv. rewrite <- Rmult_assoc.
  apply Rmult_le_compat_r; [left; apply Rinv_0_lt_compat, Hx|exact H].
Qed.

Theorem eig_mul_upper : forall n A B c i, (i < n)%nat -> 0 <= c ->
  (forall x, qform n A x <= c * qform n B x) -> cf_eig n A i <= c * cf_eig n B i.
Proof.
  intros n A B c i Hi Hc H. apply eig_le; [exact Hi|]. intros V HV.
  apply (le_eps _ _ c Hc). intros eps He.
  destruct (inf_approx (fun t => exists y, 0 < nsq n (mv (S i) V y) /\ t = rq n B (mv (S i) V y))
              (- absum n B) eps) as (t & (y & Hy & ->) & Ht).
  { intros t Ht. apply (low_set_bound n (S i) B V t Ht). }
  { eexists. exists (eunit O). split; [apply indep_nonempty, HV|reflexivity]. }
  { exact He. }
  fold (low n (S i) B V) in Ht. pose proof (eig_ge n B i V HV).
  pose proof (low_le n (S i) A V y Hy). pose proof (rq_le_mul n A B c _ Hy (H _)).
  assert (c * rq n B (mv (S i) V y) <= c * (cf_eig n B i + eps)) by (apply Rmult_le_compat_l; lra).
  lra.
Qed.

Theorem eig_mul_lower : forall n A B c i, (i < n)%nat -> 0 <= c ->
  (forall x, c * qform n B x <= qform n A x) -> c * cf_eig n B i <= cf_eig n A i.
Proof.
  intros n A B c i Hi Hc H. apply (le_eps _ _ c Hc). intros eps He.
  destruct (sup_approx (fun t => exists W, indep n (S i) W /\ t = low n (S i) B W) (absum n B) eps)
    as (t & (W & HW & ->) & Ht).
  { apply eig_set_bound. }
  { apply eig_nonempty, Hi. }
  { exact He. }
  fold (cf_eig n B i) in Ht.
  assert (Hl : c * low n (S i) B W <= low n (S i) A W).
  { apply low_ge; [exact HW|]. intros y Hy. pose proof (low_le n (S i) B W y Hy).
    assert (c * rq n B (mv (S i) W y) <= rq n A (mv (S i) W y)).
    { unfold rq. unfold Rdiv. rewrite <- Rmult_assoc. apply Rmult_le_compat_r; [left; apply Rinv_0_lt_compat, Hy|apply H]. }
    assert (c * low n (S i) B W <= c * rq n B (mv (S i) W y)) by (apply Rmult_le_compat_l; lra). lra. }
  pose proof (eig_ge n A i W HW).
  assert (c * (cf_eig n B i - eps) <= c * low n (S i) B W) by (apply Rmult_le_compat_l; lra).
  lra.
Qed.

(** ** F3: [Wt = X diag(s) Y^T] *)
Lemma orth_form_rect : forall m k X al, opbound k k (fun p q => mmul m (mtr X) X p q - idm p q) al ->
  forall z, Rabs (nsq m (mv k X z) - nsq k z) <= al * nsq k z.
Proof.
  intros m k X al H z. pose proof (quad_opbound k _ al z H) as Hq. rewrite <- quad_sub, quad_idm in Hq.
  change (mmul m (mtr X) X) with (mmul m (mtr X) (mtr (mtr X))) in Hq. rewrite quad_gram in Hq. exact Hq.
Qed.

Section Product.
Variables (m n k : nat) (X Y : nat -> nat -> R) (s lv : nat -> R) (alpha beta : R).
Hypothesis HX : opbound k k (fun p q => mmul m (mtr X) X p q - idm p q) alpha.
Hypothesis HY : opbound k k (fun p q => mmul n (mtr Y) Y p q - idm p q) beta.
Hypothesis Hal : alpha <= 1.
Hypothesis Hbe : beta <= 1.
Hypothesis Hperm : Permutation (map (fun j => Rabs (s j)) (seq 0 k)) (map lv (seq 0 k)).
Hypothesis Hsort : forall i j, (i <= j < k)%nat -> lv j <= lv i.

Let Wt := mmul k (mmul k X (diagm s)) (mtr Y).
Let Z := mmul k (diagm s) (mtr Y).

Lemma lv_nonneg : forall j, (j < k)%nat -> 0 <= lv j.
Proof.
  intros j Hj. assert (Hin : In (lv j) (map lv (seq 0 k))) by (apply in_map, in_seq; lia).
  apply (Permutation_in _ (Permutation_sym Hperm)) in Hin. apply in_map_iff in Hin.
  destruct Hin as (a & <- & _). apply Rabs_pos.
Qed.

Lemma mv_Wt : forall x a, mv n Wt x a = mv k X (mv n Z x) a.
Proof.
  intros x a. unfold Wt, Z. rewrite mv_mmul, mv_mmul. apply mv_ext; [reflexivity|]. intros j _.
  rewrite mv_mmul. reflexivity.
Qed.

Lemma mv_Zt : forall z a, mv k (mtr Z) z a = mv k Y (mv k (diagm s) z) a.
Proof.
  intros z a. rewrite <- mv_mmul. apply mv_ext; [|reflexivity]. intros j _. unfold Z, mtr, mmul.
  apply rsum_ext. intros l _. unfold diagm.
  destruct (Nat.eq_dec j l), (Nat.eq_dec l j); subst; try lia; ring.
Qed.

Theorem wt_gram_bounds : forall i, (i < k)%nat -> (i < n)%nat ->
  (1 - alpha) * (1 - beta) * (lv i * lv i) <= cf_eig n (mmul m (mtr Wt) Wt) i <= (1 + alpha) * (1 + beta) * (lv i * lv i).
Proof.
  intros i Hik Hin.
  assert (Ha0 : 0 <= alpha) by (destruct HX; assumption). assert (Hb0 : 0 <= beta) by (destruct HY; assumption).
  assert (E1 : forall x, qform n (mmul m (mtr Wt) Wt) x = nsq m (mv k X (mv n Z x))).
  { intros x. change (mmul m (mtr Wt) Wt) with (mmul m (mtr Wt) (mtr (mtr Wt))). rewrite quad_gram.
    apply nsq_ext. intros; apply mv_Wt. }
  assert (E2 : forall x, qform n (mmul k (mtr Z) Z) x = nsq k (mv n Z x)).
  { intros x. change (mmul k (mtr Z) Z) with (mmul k (mtr Z) (mtr (mtr Z))). rewrite quad_gram. reflexivity. }
  assert (U1 : cf_eig n (mmul m (mtr Wt) Wt) i <= (1 + alpha) * cf_eig n (mmul k (mtr Z) Z) i).
  { apply eig_mul_upper; [exact Hin|lra|]. intros x. rewrite E1, E2.
    pose proof (orth_form_rect m k X alpha HX (mv n Z x)) as H. apply abs_le_inv in H. lra. }
  assert (L1 : (1 - alpha) * cf_eig n (mmul k (mtr Z) Z) i <= cf_eig n (mmul m (mtr Wt) Wt) i).
  { apply eig_mul_lower; [exact Hin|lra|]. intros x. rewrite E1, E2.
    pose proof (orth_form_rect m k X alpha HX (mv n Z x)) as H. apply abs_le_inv in H. lra. }
  assert (Sw : cf_eig n (mmul k (mtr Z) Z) i = cf_eig k (mmul n Z (mtr Z)) i)
    by (symmetry; apply cf_gram_swap; assumption).
  assert (E3 : forall z, qform k (mmul n Z (mtr Z)) z = nsq n (mv k Y (mv k (diagm s) z))).
  { intros z. rewrite quad_gram. apply nsq_ext. intros; apply mv_Zt. }
  assert (E4 : forall z, nsq k (mv k (diagm s) z) = qform k (diagm (fun a => s a * s a)) z).
  { intros z. rewrite quad_diag. unfold nsq. apply rsum_ext. intros a Ha. rewrite mv_diag by exact Ha. ring. }
  assert (U2 : cf_eig k (mmul n Z (mtr Z)) i <= (1 + beta) * cf_eig k (diagm (fun a => s a * s a)) i).
  { apply eig_mul_upper; [exact Hik|lra|]. intros z. rewrite E3, <- E4.
    pose proof (orth_form_rect n k Y beta HY (mv k (diagm s) z)) as H. apply abs_le_inv in H. lra. }
  assert (L2 : (1 - beta) * cf_eig k (diagm (fun a => s a * s a)) i <= cf_eig k (mmul n Z (mtr Z)) i).
  { apply eig_mul_lower; [exact Hik|lra|]. intros z. rewrite E3, <- E4.
    pose proof (orth_form_rect n k Y beta HY (mv k (diagm s) z)) as H. apply abs_le_inv in H. lra. }
  assert (D : cf_eig k (diagm (fun a => s a * s a)) i = lv i * lv i).
  { apply (cf_diag k (fun a => s a * s a) (fun a => lv a * lv a)); [| |exact Hik].
    - pose proof (Permutation_map (fun v => v * v) Hperm) as P. rewrite !map_map in P.
      rewrite (map_ext (fun j => s j * s j) (fun j => Rabs (s j) * Rabs (s j)));
        [exact P|intros j; rewrite <- Rabs_mult, Rabs_pos_eq by apply Rle_0_sqr; reflexivity].
    - intros p q Hpq. pose proof (Hsort p q Hpq). pose proof (lv_nonneg q ltac:(lia)). nra. }
  rewrite Sw in U1, L1. rewrite D in U2, L2.
  split.
  - assert ((1 - alpha) * ((1 - beta) * (lv i * lv i)) <= (1 - alpha) * cf_eig k (mmul n Z (mtr Z)) i)
      by (apply Rmult_le_compat_l; lra). lra.
  - assert ((1 + alpha) * cf_eig k (mmul n Z (mtr Z)) i <= (1 + alpha) * ((1 + beta) * (lv i * lv i)))
      by (apply Rmult_le_compat_l; lra). lra.
Qed.

Theorem product_sing_bounds : forall i, (i < k)%nat -> (i < n)%nat ->
  lv i * sqrt ((1 - alpha) * (1 - beta)) <= sing m n Wt i <= lv i * sqrt ((1 + alpha) * (1 + beta)).
Proof.
  intros i Hik Hin. destruct (wt_gram_bounds i Hik Hin) as [L U]. pose proof (lv_nonneg i Hik) as Hl.
  assert (Ha0 : 0 <= alpha) by (destruct HX; assumption). assert (Hb0 : 0 <= beta) by (destruct HY; assumption).
  unfold sing. split.
  - rewrite <- (sqrt_pow2 (lv i) Hl), <- sqrt_mult by (try apply pow2_ge_0; nra).
    apply sqrt_le_1_alt. simpl. nra.
  - rewrite <- (sqrt_pow2 (lv i) Hl), <- sqrt_mult by (try apply pow2_ge_0; nra).
    apply sqrt_le_1_alt. simpl. nra.
Qed.

End Product.

(** ** Theorem R at the matrix level ([svd.theorem_r_float_bounds]' matrix step) *)
Theorem theorem_r_matrix : forall m n k (W X Y : nat -> nat -> R) (s lv : nat -> R) alpha beta e i,
  opbound k k (fun p q => mmul m (mtr X) X p q - idm p q) alpha -> alpha < 1 ->
  opbound k k (fun p q => mmul n (mtr Y) Y p q - idm p q) beta -> beta < 1 ->
  opbound m n (fun a b => W a b - mmul k (mmul k X (diagm s)) (mtr Y) a b) e ->
  Permutation (map (fun j => Rabs (s j)) (seq 0 k)) (map lv (seq 0 k)) ->
  (forall p q, (p <= q < k)%nat -> lv q <= lv p) ->
  (i < k)%nat -> (i < n)%nat ->
  Rmax 0 (lv i * sqrt ((1 - alpha) * (1 - beta)) - e) <= sing m n W i /\
  sing m n W i <= lv i * sqrt ((1 + alpha) * (1 + beta)) + e.
Proof.
  intros m n k W X Y s lv alpha beta e i HX Ha HY Hb HW Hp Hs Hik Hin.
  destruct (product_sing_bounds m n k X Y s lv alpha beta HX HY ltac:(lra) ltac:(lra) Hp Hs i Hik Hin) as [L U].
  pose proof (sing_weyl m n W _ e i Hin HW) as Hw. apply abs_le_inv in Hw.
  split; [apply Rmax_lub; [apply sqrt_pos|lra]|lra].
Qed.
