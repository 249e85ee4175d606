(** * Theorem G-R's matrix lemmas ([proofs/enclosure-reconstruct.md] §§2, 4)

    Mode [auto]'s reconstruction certificate ([certbound.enclose.reconstruct])
    takes for [Q] the EXACT product [Q_0 Q_1 ... Q_(K-1)] of blocks
    [Q_j = I - V_j T_j V_j^T] built from [dsytrd]'s reflectors and small
    triangular cores, never formed.  Proved here, for any real matrices:
    - Lemma R.1 ([lemma_r1]): with [S~ = R~ + R~^T], [F = R~ T - I],
      [E_S = V^T V - S~]: [||Q^T Q - I||_2 <= (2 t f + t^2 e_S)(s_S + e_S)]
      and [||V||_2 <= sqrt(s_S + e_S)] for [t >= ||T||], [f >= ||F||],
      [e_S >= ||E_S||], [s_S >= ||S~||] (via
      [||Q x||^2 - ||x||^2 = 2 (T w)^T F w + (T w)^T E_S (T w)], [w = V^T x]);
    - Lemma R.2 ([lemma_r2]): [||Q_j^T Q_j - I|| <= eps_j <= 1] for each
      block gives [||Q^T Q - I||_2 <= prod(1 + eps_j) - 1] and
      [||Q_a ... Q_(a+m-1)||_2^2 <= prod(1 + eps_j)];
    - Lemma R.3 ([lemma_r3]): one block's rounding, for ANY floats
      [U, Y, Z, M, H, W, X'] with the errors [E_U = U - V T^T], ...,
      [E_5 = X' - (X - V W^T - W V^T)] bounded in norm:
      [||X' - Q X Q^T|| <= e_5 + 2 nu (h (e_Y + xi e_U) + nu (t e_Z + e_M)/2
      + e_H/2 + e_W)], [h = (1 + sqrt(1 + eps))/2];
    - Lemma R.4's recursion ([lemma_r4]): [E_j = D_j + Q_j E_(j+1) Q_j^T],
      [E_K = 0], [||D_j|| <= Delta_j] whenever [||E_(j+1)|| <= C], and
      [P sum Delta_j <= C] with [P >= prod(1 + eps_j)] give
      [||E_0||_2 <= P sum Delta_j];
    - their composition with Theorem G-T ([theorem_gr_matrix]), and from
      the code's floats ([theorem_gr_float]: [_static_bounds]' [eps_j],
      [Pr], [alpha = fl(Pr - 1)]; [_bounds]' [delta_j], [tot], [acc],
      [e_bar = up(r + acc)]).
    A norm bound of a symmetric matrix from its quadratic form
    ([sym_opbound_of_form], by polarization) replaces the spectral
    argument of the prose. *)

From Coq Require Import Reals Psatz List.
From Certbound Require Import NormBounds Lemma112 TheoremGFloat CourantFischer.
Open Scope R_scope.

Definition dotp (n : nat) (x y : nat -> R) : R := rsum n (fun a => x a * y a).

Lemma abs_le_of_sq : forall a b, 0 <= b -> a * a <= b * b -> Rabs a <= b.
Proof.
  intros a b Hb H. rewrite <- (Rabs_pos_eq b Hb). apply Rsqr_le_abs_0. unfold Rsqr. exact H.
Qed.

Lemma dot_opbound : forall n m (A B : nat -> nat -> R) a b w,
  opbound n m A a -> opbound n m B b -> Rabs (dotp n (mv m A w) (mv m B w)) <= a * b * nsq m w.
Proof.
  intros n m A B a b w [Ha HA] [Hb HB]. apply abs_le_of_sq.
  - apply Rmult_le_pos; [apply Rmult_le_pos; assumption|apply nsq_nonneg].
  - eapply Rle_trans; [apply cauchy_schwarz|]. fold (nsq n (mv m A w)). fold (nsq n (mv m B w)).
    pose proof (HA w). pose proof (HB w). pose proof (nsq_nonneg n (mv m A w)). pose proof (nsq_nonneg m w).
    replace (a * b * nsq m w * (a * b * nsq m w)) with ((a * a * nsq m w) * (b * b * nsq m w)) by ring.
    apply Rmult_le_compat; try assumption. apply nsq_nonneg.
Qed.

(** ** A symmetric matrix's norm from its quadratic form (polarization) *)

Lemma mv_comb : forall n M x z s a, mv n M (fun l => x l + s * z l) a = mv n M x a + s * mv n M z a.
Proof. intros. unfold mv. rewrite <- rsum_scal, <- rsum_add. apply rsum_ext. intros; ring. Qed.

Lemma bil_symm : forall n M x z, symm n M -> dotp n x (mv n M z) = dotp n z (mv n M x).
Proof.
  intros n M x z HM. unfold dotp, mv.
  rewrite (rsum_ext n (fun a => x a * rsum n (fun j => M a j * z j)) (fun a => rsum n (fun j => x a * M a j * z j)))
    by (intros; rewrite <- rsum_scal; apply rsum_ext; intros; ring).
  rewrite rsum_swap. apply rsum_ext. intros j Hj. rewrite <- rsum_scal. apply rsum_ext. intros a Ha.
  rewrite (HM a j Ha Hj). ring.
Qed.

Lemma qform_comb : forall n M x z s, symm n M ->
  qform n M (fun l => x l + s * z l) = qform n M x + 2 * s * dotp n z (mv n M x) + s * s * qform n M z.
Proof.
  intros n M x z s HM. unfold qform.
  rewrite (rsum_ext n _ (fun a => x a * mv n M x a + s * (x a * mv n M z a) + s * (z a * mv n M x a)
                                  + s * s * (z a * mv n M z a))) by (intros; rewrite mv_comb; ring).
  rewrite !rsum_add, !rsum_scal. fold (dotp n x (mv n M z)). fold (dotp n z (mv n M x)).
  rewrite (bil_symm n M x z HM). ring.
Qed.

Lemma nsq_comb : forall n x z s, nsq n (fun l => x l + s * z l) = nsq n x + 2 * s * dotp n x z + s * s * nsq n z.
Proof.
  intros. unfold nsq, dotp.
  rewrite (rsum_ext n _ (fun a => x a * x a + 2 * s * (x a * z a) + s * s * (z a * z a))) by (intros; ring).
  rewrite !rsum_add, !rsum_scal. ring.
Qed.

Theorem sym_opbound_of_form : forall n M al, symm n M -> 0 <= al ->
  (forall x, Rabs (qform n M x) <= al * nsq n x) -> opbound n n M al.
Proof.
  intros n M al HM Hal H. split; [exact Hal|]. intros x.
  set (z := mv n M x). set (Z := nsq n z). set (X := nsq n x).
  assert (HB : dotp n z (mv n M x) = Z) by reflexivity.
  assert (Hq : forall s, 0 <= al * Z * s * s - 2 * Z * s + al * X).
  { intros s. pose proof (H (fun l => x l + s * z l)) as H1. pose proof (H (fun l => x l + - s * z l)) as H2.
    rewrite qform_comb, nsq_comb in H1, H2 by exact HM. rewrite HB in H1, H2.
    apply abs_le_inv in H1. apply abs_le_inv in H2. fold X Z in H1, H2.
    assert (E : dotp n x z * s + dotp n x z * - s = 0) by ring.
    nra. }
  assert (HZ : 0 <= Z) by apply nsq_nonneg.
  pose proof (discriminant (al * Z) Z (al * X) ltac:(apply Rmult_le_pos; assumption) Hq) as Hd.
  destruct HZ as [HZ|HZ]; [|rewrite <- HZ; apply Rmult_le_pos; [apply Rle_0_sqr|apply nsq_nonneg]].
  apply (Rmult_le_reg_l Z); [exact HZ|]. nra.
Qed.

Lemma gram_minus_id_symm : forall n (Q : nat -> nat -> R), symm n (fun a c => mmul n (mtr Q) Q a c - idm a c).
Proof.
  intros n Q a c _ _. unfold mmul, mtr, idm. f_equal; [apply rsum_ext; intros; ring|].
  destruct (Nat.eq_dec a c), (Nat.eq_dec c a); subst; try reflexivity; lia.
Qed.

Lemma form_gram_minus_id : forall n (Q : nat -> nat -> R) x,
  qform n (fun a c => mmul n (mtr Q) Q a c - idm a c) x = nsq n (mv n Q x) - nsq n x.
Proof.
  intros n Q x. rewrite <- quad_sub, quad_idm.
  change (mmul n (mtr Q) Q) with (mmul n (mtr Q) (mtr (mtr Q))). rewrite quad_gram. reflexivity.
Qed.

(** [||Q^T Q - I|| <= eps] from [|(||Q x||^2 - ||x||^2)| <= eps ||x||^2], and back. *)
Lemma orth_opbound : forall n Q eps, 0 <= eps ->
  (forall x, Rabs (nsq n (mv n Q x) - nsq n x) <= eps * nsq n x) ->
  opbound n n (fun a c => mmul n (mtr Q) Q a c - idm a c) eps.
Proof.
  intros n Q eps He H. apply sym_opbound_of_form; [apply gram_minus_id_symm|exact He|].
  intros x. rewrite form_gram_minus_id. apply H.
Qed.

Lemma orth_form : forall n Q eps, opbound n n (fun a c => mmul n (mtr Q) Q a c - idm a c) eps ->
  forall x, Rabs (nsq n (mv n Q x) - nsq n x) <= eps * nsq n x.
Proof. intros n Q eps H x. rewrite <- form_gram_minus_id. apply quad_opbound, H. Qed.

(** ** Lemma R.1: one block [Q = I - V T V^T] *)

Section LemmaR1.
Variables (n b : nat) (V T Rt St : nat -> nat -> R) (t f eS sS : R).
Hypothesis St_split : forall p q, (p < b)%nat -> (q < b)%nat -> St p q = Rt p q + Rt q p.
Hypothesis T_bound : opbound b b T t.
Hypothesis F_bound : opbound b b (fun p q => mmul b Rt T p q - idm p q) f.
Hypothesis ES_bound : opbound b b (fun p q => mmul n (mtr V) V p q - St p q) eS.
Hypothesis St_bound : opbound b b St sS.

Let Q := fun a c => idm a c - mmul b (mmul b V T) (mtr V) a c.

Lemma V_bound : opbound n b V (sqrt (sS + eS)).
Proof.
  apply gram_opbound_sqrt. apply (opbound_ext b b (fun p q => St p q + (mmul n (mtr V) V p q - St p q))).
  - intros; ring.
  - apply opbound_add; assumption.
Qed.

Lemma dotp_mv_tr : forall x (u : nat -> R), dotp n x (mv b V u) = dotp b (mv n (mtr V) x) u.
Proof.
  intros x u. unfold dotp, mv, mtr.
  rewrite (rsum_ext n _ (fun a => rsum b (fun l => x a * V a l * u l)))
    by (intros; rewrite <- rsum_scal; apply rsum_ext; intros; ring).
  rewrite rsum_swap. apply rsum_ext. intros l _. rewrite rsum_mulr. apply rsum_ext. intros; ring.
Qed.

Lemma mv_Q : forall x a, (a < n)%nat -> mv n Q x a = x a - mv b V (mv b T (mv n (mtr V) x)) a.
Proof.
  intros x a Ha. unfold Q. rewrite mv_sub, mv_idm by exact Ha. f_equal.
  rewrite mv_mmul, mv_mmul. reflexivity.
Qed.

(** [||Q x||^2 - ||x||^2 = 2 (T w)^T F w + (T w)^T E_S (T w)], [w = V^T x]. *)
Lemma r1_identity : forall x,
  let w := mv n (mtr V) x in
  nsq n (mv n Q x) - nsq n x
  = 2 * dotp b (mv b T w) (mv b (fun p q => mmul b Rt T p q - idm p q) w)
    + qform b (fun p q => mmul n (mtr V) V p q - St p q) (mv b T w).
Proof.
  intros x w. set (u := mv b T w).
  rewrite (nsq_ext n _ (fun a => x a + (-1) * mv b V u a)) by (intros a Ha; rewrite mv_Q by exact Ha; unfold u, w; ring).
  rewrite nsq_comb. rewrite dotp_mv_tr. fold w.
  (* [||V u||^2 = u^T (V^T V) u] *)
  assert (E1 : nsq n (mv b V u) = qform b (mmul n (mtr V) V) u).
  { change (mmul n (mtr V) V) with (mmul n (mtr V) (mtr (mtr V))). rewrite quad_gram. reflexivity. }
  rewrite E1. rewrite <- (quad_sub b (mmul n (mtr V) V) St u).
  (* [u^T S~ u = 2 u^T R~ u] *)
  assert (Et : qform b (mtr Rt) u = qform b Rt u).
  { unfold qform, mv, mtr.
    rewrite (rsum_ext b (fun a => u a * rsum b (fun j => Rt j a * u j)) (fun a => rsum b (fun j => u a * Rt j a * u j)))
      by (intros; rewrite <- rsum_scal; apply rsum_ext; intros; ring).
    rewrite rsum_swap. apply rsum_ext. intros j _. rewrite <- rsum_scal. apply rsum_ext. intros; ring. }
  assert (Es : qform b St u = qform b Rt u + qform b (mtr Rt) u).
  { unfold qform. rewrite <- rsum_add. apply rsum_ext. intros a Ha. unfold mv.
    rewrite <- Rmult_plus_distr_l, <- rsum_add. f_equal. apply rsum_ext. intros j Hj. unfold mtr.
    rewrite St_split by assumption. ring. }
  assert (E2 : qform b St u = 2 * qform b Rt u) by lra.
  (* [R~ u = R~ T w = w + F w] *)
  assert (E3 : qform b Rt u = dotp b u w + dotp b u (mv b (fun p q => mmul b Rt T p q - idm p q) w)).
  { unfold qform, dotp. rewrite <- rsum_add. apply rsum_ext. intros a Ha. rewrite mv_sub, mv_idm by exact Ha.
    rewrite mv_mmul. fold u. ring. }
  assert (E4 : dotp b w u = dotp b u w) by (unfold dotp; apply rsum_ext; intros; ring).
  rewrite E2, E3. rewrite E4. ring_simplify. unfold dotp. ring.
Qed.

Theorem lemma_r1 :
  opbound n n (fun a c => mmul n (mtr Q) Q a c - idm a c) ((2 * t * f + t * t * eS) * (sS + eS)) /\
  opbound n b V (sqrt (sS + eS)).
Proof.
  split; [|exact V_bound].
  assert (Ht : 0 <= t) by (destruct T_bound; assumption). assert (Hf : 0 <= f) by (destruct F_bound; assumption).
  assert (He : 0 <= eS) by (destruct ES_bound; assumption). assert (Hs : 0 <= sS) by (destruct St_bound; assumption).
  apply orth_opbound; [apply Rmult_le_pos; nra|]. intros x.
  rewrite r1_identity. set (w := mv n (mtr V) x).
  pose proof (dot_opbound b b T _ t f w T_bound F_bound) as H1.
  pose proof (quad_opbound b _ eS (mv b T w) ES_bound) as H2.
  destruct T_bound as [_ HT]. pose proof (HT w) as H3.
  pose proof (opbound_transpose n b V _ V_bound) as [_ HV]. pose proof (HV x) as H4. fold w in H4.
  rewrite sqrt_sqrt in H4 by lra.
  pose proof (nsq_nonneg b w). pose proof (nsq_nonneg n x). pose proof (nsq_nonneg b (mv b T w)).
  eapply Rle_trans; [apply Rabs_triang|]. rewrite Rabs_mult, (Rabs_pos_eq 2) by lra.
  assert (Hw : (2 * t * f + t * t * eS) * nsq b w <= (2 * t * f + t * t * eS) * ((sS + eS) * nsq n x))
    by (apply Rmult_le_compat_l; [nra|lra]).
  assert (H6 : eS * nsq b (mv b T w) <= eS * (t * t * nsq b w)) by (apply Rmult_le_compat_l; lra).
  nra.
Qed.

End LemmaR1.

(** ** Lemma R.2: the product [Q = Q_0 Q_1 ... Q_(K-1)] *)

Fixpoint qprod (k : nat) (Qs : nat -> nat -> nat -> R) (a m : nat) : nat -> nat -> R :=
  match m with
  | O => idm
  | S m' => mmul k (Qs a) (qprod k Qs (S a) m')
  end.

Fixpoint pprod (g : nat -> R) (a m : nat) : R :=
  match m with
  | O => 1
  | S m' => g a * pprod g (S a) m'
  end.

Section LemmaR2.
Variables (k : nat) (Qs : nat -> nat -> nat -> R) (eps : nat -> R).
Hypothesis eps_range : forall j, 0 <= eps j <= 1.
Hypothesis block : forall j, opbound k k (fun a c => mmul k (mtr (Qs j)) (Qs j) a c - idm a c) (eps j).

Lemma pprod_ge : forall a m, pprod (fun j => 1 - eps j) a m <= pprod (fun j => 1 + eps j) a m /\
  0 <= pprod (fun j => 1 - eps j) a m /\ 1 <= pprod (fun j => 1 + eps j) a m /\
  2 <= pprod (fun j => 1 + eps j) a m + pprod (fun j => 1 - eps j) a m.
Proof.
  intros a m. revert a. induction m as [|m IH]; intros a; simpl; [lra|].
  destruct (IH (S a)) as (H1 & H2 & H3 & H4). pose proof (eps_range a).
  set (A := pprod (fun j => 1 + eps j) (S a) m) in *. set (B := pprod (fun j => 1 - eps j) (S a) m) in *.
  split; [nra|split; [nra|split; nra]].
Qed.

Lemma qprod_norms : forall m a x,
  pprod (fun j => 1 - eps j) a m * nsq k x <= nsq k (mv k (qprod k Qs a m) x) <= pprod (fun j => 1 + eps j) a m * nsq k x.
Proof.
  induction m as [|m IH]; intros a x.
  - simpl qprod. simpl pprod. rewrite (nsq_ext k (mv k idm x) x) by (intros; apply mv_idm; assumption). lra.
  - simpl qprod. simpl pprod. rewrite (nsq_ext k (mv k (mmul k (Qs a) (qprod k Qs (S a) m)) x) (mv k (Qs a) (mv k (qprod k Qs (S a) m) x))) by (intros; apply mv_mmul).
    set (y := mv k (qprod k Qs (S a) m) x).
    pose proof (orth_form k (Qs a) (eps a) (block a) y) as Hb. apply abs_le_inv in Hb.
    destruct (IH (S a) x) as [H1 H2]. fold y in H1, H2. pose proof (eps_range a).
    pose proof (pprod_ge (S a) m) as (_ & H3 & _). pose proof (nsq_nonneg k x).
    set (A := pprod (fun j => 1 + eps j) (S a) m) in *. set (B := pprod (fun j => 1 - eps j) (S a) m) in *.
    split.
    + assert ((1 - eps a) * (B * nsq k x) <= (1 - eps a) * nsq k y) by (apply Rmult_le_compat_l; lra). nra.
    + assert ((1 + eps a) * nsq k y <= (1 + eps a) * (A * nsq k x)) by (apply Rmult_le_compat_l; lra). nra.
Qed.

Theorem lemma_r2 : forall K,
  opbound k k (fun a c => mmul k (mtr (qprod k Qs 0 K)) (qprod k Qs 0 K) a c - idm a c)
    (pprod (fun j => 1 + eps j) 0 K - 1) /\
  forall a m, opbound k k (qprod k Qs a m) (sqrt (pprod (fun j => 1 + eps j) a m)).
Proof.
  intros K. split.
  - pose proof (pprod_ge 0 K) as (H1 & H2 & H3 & H4). apply orth_opbound; [lra|]. intros x.
    destruct (qprod_norms K 0 x) as [L U]. pose proof (nsq_nonneg k x). apply Rabs_le. split; nra.
  - intros a m. pose proof (pprod_ge a m) as (_ & _ & H3 & _). split; [apply sqrt_pos|]. intros x.
    rewrite sqrt_sqrt by lra. apply qprod_norms.
Qed.

End LemmaR2.

(** ** Lemma R.4's recursion *)

Section LemmaR4.
Variables (k K : nat) (Qs Ds Es : nat -> nat -> nat -> R) (eps Dl : nat -> R) (P C : R).
Hypothesis eps_nonneg : forall j, 0 <= eps j.
Hypothesis Dl_nonneg : forall j, 0 <= Dl j.
Hypothesis E_last : forall p q, (p < k)%nat -> (q < k)%nat -> Es K p q = 0.
Hypothesis E_step : forall j, (j < K)%nat -> forall p q, (p < k)%nat -> (q < k)%nat ->
  Es j p q = Ds j p q + mmul k (mmul k (Qs j) (Es (S j))) (mtr (Qs j)) p q.
Hypothesis Q_norm : forall j, (j < K)%nat -> opbound k k (Qs j) (sqrt (1 + eps j)).
Hypothesis D_bound : forall j, (j < K)%nat -> opbound k k (Es (S j)) C -> opbound k k (Ds j) (Dl j).
Hypothesis P_ge : pprod (fun j => 1 + eps j) 0 K <= P.
Hypothesis budget : P * rsum K Dl <= C.

(** [sacc j] = [sum_(i >= j) Delta_i prod_(j <= l < i) (1 + eps_l)], by the recursion. *)
Fixpoint sacc (m : nat) : R :=
  match m with
  | O => 0
  | S m' => Dl (K - S m') + (1 + eps (K - S m')) * sacc m'
  end.

Lemma rsum_first : forall m (g : nat -> R), rsum (S m) g = g O + rsum m (fun i => g (S i)).
Proof. induction m as [|m IH]; intros g; simpl; [ring|]. simpl in IH. rewrite IH. ring. Qed.

Lemma rsum_from : forall m, (m <= K)%nat -> rsum K Dl = rsum (K - m) Dl + rsum m (fun i => Dl (K - m + i)%nat).
Proof.
  induction m as [|m IH]; intros Hm.
  - simpl. rewrite Nat.sub_0_r. ring.
  - rewrite IH by lia. rewrite rsum_first, Nat.add_0_r.
    replace (K - m)%nat with (S (K - S m)) by lia. simpl rsum.
    rewrite (rsum_ext m (fun i => Dl (S (K - S m + i))) (fun i => Dl (K - S m + S i)%nat)) by (intros; f_equal; lia).
    ring.
Qed.

Lemma sacc_bound : forall m, (m <= K)%nat ->
  0 <= sacc m <= pprod (fun j => 1 + eps j) (K - m) m * rsum m (fun i => Dl (K - m + i)%nat).
Proof.
  induction m as [|m IH]; intros Hm; [simpl; lra|].
  destruct (IH ltac:(lia)) as [H0 H1]. simpl sacc.
  replace (pprod (fun j => 1 + eps j) (K - S m) (S m))
    with ((1 + eps (K - S m)%nat) * pprod (fun j => 1 + eps j) (K - m) m)
    by (simpl; replace (S (K - S m)) with (K - m)%nat by lia; reflexivity).
  assert (E : rsum (S m) (fun i => Dl (K - S m + i)%nat) = Dl (K - S m)%nat + rsum m (fun i => Dl (K - m + i)%nat)).
  { rewrite rsum_first, Nat.add_0_r. f_equal. apply rsum_ext. intros i _. f_equal. lia. }
  rewrite E.
  assert (Hp : 1 <= pprod (fun j => 1 + eps j) (K - m) m).
  { clear - eps_nonneg. generalize (K - m)%nat. induction m as [|m IHm]; intros a; simpl; [lra|].
    specialize (IHm (S a)). pose proof (eps_nonneg a). nra. }
  pose proof (eps_nonneg (K - S m)%nat). pose proof (Dl_nonneg (K - S m)%nat).
  set (Pm := pprod (fun j => 1 + eps j) (K - m) m) in *. set (Sm := rsum m (fun i => Dl (K - m + i)%nat)) in *.
  assert (A1 : (1 + eps (K - S m)%nat) * sacc m <= (1 + eps (K - S m)%nat) * (Pm * Sm))
    by (apply Rmult_le_compat_l; lra).
  assert (A2 : 1 <= (1 + eps (K - S m)%nat) * Pm) by nra.
  assert (A3 : Dl (K - S m)%nat <= (1 + eps (K - S m)%nat) * Pm * Dl (K - S m)%nat) by nra.
  assert (A4 : 0 <= (1 + eps (K - S m)%nat) * sacc m) by (apply Rmult_le_pos; lra).
  split; [lra|]. rewrite Rmult_plus_distr_l. lra.
Qed.

Lemma pprod_mono : forall a m, pprod (fun j => 1 + eps j) (a + m) (K - a - m) <= pprod (fun j => 1 + eps j) a (K - a).
Proof.
  intros a m. revert a. induction m as [|m IH]; intros a.
  - rewrite Nat.add_0_r, Nat.sub_0_r. lra.
  - destruct (le_lt_dec (K - a) m) as [Hle|Hlt].
    + replace (K - a - S m)%nat with O by lia. simpl.
      clear - eps_nonneg. generalize a (K - a)%nat. intros b r. revert b. induction r as [|r IHr]; intros b; simpl; [lra|].
      specialize (IHr (S b)). pose proof (eps_nonneg b). nra.
    + replace (a + S m)%nat with (S a + m)%nat by lia. replace (K - a - S m)%nat with (K - S a - m)%nat by lia.
      eapply Rle_trans; [apply IH|]. replace (K - a)%nat with (S (K - S a)) by lia. simpl.
      assert (1 <= pprod (fun j => 1 + eps j) (S a) (K - S a)).
      { clear - eps_nonneg. generalize (S a) (K - S a)%nat. intros b r. revert b.
        induction r as [|r IHr]; intros b; simpl; [lra|]. specialize (IHr (S b)). pose proof (eps_nonneg b). nra. }
      pose proof (eps_nonneg a). nra.
Qed.

Lemma rsum_tail_le : forall m, (m <= K)%nat -> rsum m (fun i => Dl (K - m + i)%nat) <= rsum K Dl.
Proof.
  intros m Hm. rewrite (rsum_from m Hm). assert (0 <= rsum (K - m) Dl) by (apply rsum_nonneg; intros; apply Dl_nonneg).
  lra.
Qed.

Lemma E_bound : forall m, (m <= K)%nat -> opbound k k (Es (K - m)%nat) (sacc m).
Proof.
  induction m as [|m IH]; intros Hm.
  - rewrite Nat.sub_0_r. apply (opbound_ext k k (fun _ _ => 0)); [intros; symmetry; apply E_last; assumption|].
    apply opbound_zero.
  - set (j := (K - S m)%nat). assert (Hj : (j < K)%nat) by (unfold j; lia).
    assert (HSj : S j = (K - m)%nat) by (unfold j; lia).
    pose proof (IH ltac:(lia)) as HE. rewrite <- HSj in HE.
    assert (HC : opbound k k (Es (S j)) C).
    { apply (opbound_weaken _ _ _ (sacc m)); [exact HE|].
      destruct (sacc_bound m ltac:(lia)) as [_ H1]. eapply Rle_trans; [exact H1|].
      eapply Rle_trans; [|exact budget].
      assert (Hq : pprod (fun j => 1 + eps j) (K - m) m <= P).
      { eapply Rle_trans; [|exact P_ge]. pose proof (pprod_mono 0 (K - m)) as Hmono.
        replace (0 + (K - m))%nat with (K - m)%nat in Hmono by lia.
        replace (K - 0 - (K - m))%nat with m in Hmono by lia. rewrite Nat.sub_0_r in Hmono. exact Hmono. }
      pose proof (rsum_tail_le m ltac:(lia)).
      assert (0 <= rsum m (fun i => Dl (K - m + i)%nat)) by (apply rsum_nonneg; intros; apply Dl_nonneg).
      assert (1 <= pprod (fun j => 1 + eps j) (K - m) m).
      { clear - eps_nonneg. generalize (K - m)%nat. induction m as [|m IHm]; intros a; simpl; [lra|].
        specialize (IHm (S a)). pose proof (eps_nonneg a). nra. }
      nra. }
    simpl sacc. fold j.
    apply (opbound_ext k k (fun p q => Ds j p q + mmul k (mmul k (Qs j) (Es (S j))) (mtr (Qs j)) p q)).
    + intros p q Hp Hq. symmetry. apply E_step; assumption.
    + replace ((1 + eps j) * sacc m) with (sqrt (1 + eps j) * sacc m * sqrt (1 + eps j)).
      * apply opbound_add; [apply D_bound; assumption|].
        apply opbound_mul; [apply opbound_mul; [apply Q_norm, Hj|exact HE]|apply opbound_transpose, Q_norm, Hj].
      * pose proof (eps_nonneg j). replace (sqrt (1 + eps j) * sacc m * sqrt (1 + eps j))
          with (sqrt (1 + eps j) * sqrt (1 + eps j) * sacc m) by ring. rewrite sqrt_sqrt by lra. ring.
Qed.

Theorem lemma_r4 : opbound k k (Es O) (P * rsum K Dl).
Proof.
  pose proof (E_bound K (le_n K)) as H. rewrite Nat.sub_diag in H.
  apply (opbound_weaken _ _ _ (sacc K)); [exact H|].
  destruct (sacc_bound K (le_n K)) as [_ H1]. rewrite Nat.sub_diag in H1.
  rewrite (rsum_ext K _ Dl) in H1 by (intros; f_equal).
  assert (0 <= rsum K Dl) by (apply rsum_nonneg; intros; apply Dl_nonneg).
  eapply Rle_trans; [exact H1|]. apply Rmult_le_compat_r; [assumption|exact P_ge].
Qed.

End LemmaR4.

Lemma block_norm : forall k Q eps, 0 <= eps ->
  opbound k k (fun a c => mmul k (mtr Q) Q a c - idm a c) eps -> opbound k k Q (sqrt (1 + eps)).
Proof.
  intros k Q eps He H. split; [apply sqrt_pos|]. intros x. rewrite sqrt_sqrt by lra.
  pose proof (orth_form k Q eps H x) as Hx. apply abs_le_inv in Hx. lra.
Qed.

(** The iterates: [X_K = T], [X_j] = block [j]'s float result on [X_(j+1)];
    [E_j = X_j - P_j T P_j^T] with [P_j = Q_j ... Q_(K-1)] and
    [D_j = X_j - Q_j X_(j+1) Q_j^T] satisfy [E_K = 0] and
    [E_j = D_j + Q_j E_(j+1) Q_j^T] (Lemma R.4's proof). *)
Lemma mtr_mmul : forall k A B i j, mtr (mmul k A B) i j = mmul k (mtr B) (mtr A) i j.
Proof. intros. unfold mtr, mmul. apply rsum_ext. intros; ring. Qed.

Lemma congr_sub : forall k Q X Y p q,
  mmul k (mmul k Q (fun a b => X a b - Y a b)) (mtr Q) p q
  = mmul k (mmul k Q X) (mtr Q) p q - mmul k (mmul k Q Y) (mtr Q) p q.
Proof.
  intros. rewrite <- mmul_sub_l. apply mmul_ext_l. intros l _. apply mmul_sub_r.
Qed.

Lemma congr_assoc : forall k Q Pm T p q,
  mmul k (mmul k Q (mmul k (mmul k Pm T) (mtr Pm))) (mtr Q) p q
  = mmul k (mmul k (mmul k Q Pm) T) (mtr (mmul k Q Pm)) p q.
Proof.
  intros k Q Pm T p q.
  rewrite (mmul_ext_r k _ (mtr (mmul k Q Pm)) (mmul k (mtr Pm) (mtr Q))) by (intros; apply mtr_mmul).
  rewrite (mmul_assoc k k Q (mmul k (mmul k Pm T) (mtr Pm)) (mtr Q)).
  rewrite (mmul_assoc k k (mmul k Q Pm) T (mmul k (mtr Pm) (mtr Q))).
  rewrite (mmul_assoc k k Q Pm (mmul k T (mmul k (mtr Pm) (mtr Q)))).
  apply mmul_ext_r. intros l _.
  rewrite (mmul_assoc k k (mmul k Pm T) (mtr Pm) (mtr Q)).
  rewrite (mmul_assoc k k Pm T (mmul k (mtr Pm) (mtr Q))). reflexivity.
Qed.

Lemma mmul_idm_l : forall k A p q, (p < k)%nat -> mmul k idm A p q = A p q.
Proof. intros k A p q Hp. exact (mv_idm k (fun l => A l q) p Hp). Qed.

Lemma mmul_idm_tr : forall k A p q, (q < k)%nat -> mmul k A (mtr idm) p q = A p q.
Proof.
  intros k A p q Hq. unfold mmul, mtr, idm.
  rewrite (rsum_ext k _ (fun l => if Nat.eq_dec l q then A p q else 0)).
  - rewrite rsum_point. destruct (lt_dec q k); [reflexivity|lia].
  - intros l _. destruct (Nat.eq_dec q l), (Nat.eq_dec l q); subst; try lia; ring.
Qed.

Theorem r4_errors : forall k K (Qs X : nat -> nat -> nat -> R) (T : nat -> nat -> R),
  (forall p q, (p < k)%nat -> (q < k)%nat -> X K p q = T p q) ->
  let Es := fun j p q => X j p q - mmul k (mmul k (qprod k Qs j (K - j)) T) (mtr (qprod k Qs j (K - j))) p q in
  let Ds := fun j p q => X j p q - mmul k (mmul k (Qs j) (X (S j))) (mtr (Qs j)) p q in
  (forall p q, (p < k)%nat -> (q < k)%nat -> Es K p q = 0) /\
  (forall j, (j < K)%nat -> forall p q, (p < k)%nat -> (q < k)%nat ->
     Es j p q = Ds j p q + mmul k (mmul k (Qs j) (Es (S j))) (mtr (Qs j)) p q).
Proof.
  intros k K Qs X T HK Es Ds. split.
  - intros p q Hp Hq. unfold Es. rewrite Nat.sub_diag. simpl qprod.
    rewrite mmul_idm_tr by exact Hq. rewrite mmul_idm_l by exact Hp. rewrite HK by assumption. ring.
  - intros j Hj p q Hp Hq. unfold Es, Ds. rewrite congr_sub.
    replace (K - j)%nat with (S (K - S j)) by lia. simpl qprod. rewrite <- congr_assoc. ring.
Qed.

(** ** Theorem G-R (matrix level): [Q = Q_0 ... Q_(K-1)] in Theorem G-T

    [alpha = P - 1] with [P >= prod(1 + eps_j)] (Lemmas R.1, R.2), and
    [e = e_G + P sum Delta_j] with [e_G >= ||G_hat - X_0||] computed and
    [P sum Delta_j >= ||X_0 - Q T Q^T||] (Lemma R.4: [X_j] the float
    iterates, [X_K = T]; block [j]'s rounding
    [||X_j - Q_j X_(j+1) Q_j^T|| <= Delta_j] whenever
    [||X_(j+1) - P_(j+1) T P_(j+1)^T|| <= C], Lemma R.3); then Theorem
    G-T's float ends ([cf_theorem_gt_matrix], Courant-Fischer eigenvalues,
    Lemma S's brackets [la], [lb] of [lambda_i(T)]) enclose [sigma_i(W)]. *)
Theorem theorem_gr_matrix : forall k n K (W Gh T : nat -> nat -> R) (Qs X : nat -> nat -> nat -> R)
    (eps Dl la lb : nat -> R) P C eG beta c grow shrink i,
  (1 <= k)%nat -> (i < k)%nat -> symm k T ->
  (forall p, (p < k)%nat -> la p <= cf_eig k T p <= lb p) ->
  (forall j, 0 <= eps j <= 1) ->
  (forall j, opbound k k (fun a c => mmul k (mtr (Qs j)) (Qs j) a c - idm a c) (eps j)) ->
  pprod (fun j => 1 + eps j) 0 K <= P -> P - 1 < 1 ->
  (forall j, 0 <= Dl j) ->
  (forall p q, (p < k)%nat -> (q < k)%nat -> X K p q = T p q) ->
  (forall j, (j < K)%nat ->
     opbound k k (fun p q => X (S j) p q - mmul k (mmul k (qprod k Qs (S j) (K - S j)) T)
                                                (mtr (qprod k Qs (S j) (K - S j))) p q) C ->
     opbound k k (fun p q => X j p q - mmul k (mmul k (Qs j) (X (S j))) (mtr (Qs j)) p q) (Dl j)) ->
  P * rsum K Dl <= C ->
  opbound k k (fun p q => Gh p q - X O p q) eG ->
  opbound k k (fun p q => Gh p q - mmul n W (mtr W) p q) beta ->
  beta + (eG + P * rsum K Dl) <= c -> 1 + (P - 1) <= grow -> 0 <= shrink <= 1 - (P - 1) ->
  g_lower_end la c grow shrink i <= sqrt (cf_eig k (mmul n W (mtr W)) i) <= g_upper_end lb c grow shrink i.
Proof.
  intros k n K W Gh T Qs X eps Dl la lb P C eG beta c grow shrink i
    Hk Hi HT Hbr Heps Hblk HP HP1 HDl HXK HD Hbud HG HB Hc Hg Hs.
  assert (Hen : forall j, 0 <= eps j) by (intros j; apply Heps).
  destruct (lemma_r2 k Qs eps Heps Hblk K) as [Hal _].
  assert (Halpha : opbound k k (fun p q => mmul k (mtr (qprod k Qs 0 K)) (qprod k Qs 0 K) p q - idm p q) (P - 1))
    by (apply (opbound_weaken _ _ _ _ _ Hal); lra).
  destruct (r4_errors k K Qs X T HXK) as [Elast Estep].
  set (Es := fun j p q => X j p q - mmul k (mmul k (qprod k Qs j (K - j)) T) (mtr (qprod k Qs j (K - j))) p q) in *.
  set (Ds := fun j p q => X j p q - mmul k (mmul k (Qs j) (X (S j))) (mtr (Qs j)) p q) in *.
  assert (HE0 : opbound k k (Es O) (P * rsum K Dl)).
  { apply (lemma_r4 k K Qs Ds Es eps Dl P C Hen HDl Elast Estep); try assumption.
    intros j _. apply block_norm; [apply Hen|apply Hblk]. }
  assert (He : opbound k k (fun p q => Gh p q - mmul k (mmul k (qprod k Qs 0 K) T) (mtr (qprod k Qs 0 K)) p q)
                 (eG + P * rsum K Dl)).
  { apply (opbound_ext k k (fun p q => (Gh p q - X O p q) + Es O p q)).
    - intros p q Hp Hq. unfold Es. rewrite Nat.sub_0_r. ring.
    - apply opbound_add; assumption. }
  exact (cf_theorem_gt_matrix k n W Gh (qprod k Qs 0 K) T la lb (P - 1) beta (eG + P * rsum K Dl) c grow shrink i
           Hk Hi HT Hbr Halpha HP1 HB He Hc Hg Hs).
Qed.

(** ** Lemma R.3: one block's rounding ([reconstruct._reconstruct]'s loop)

    For a symmetric [X] ([n x n]), [V] ([n x b]), [T] ([b x b]),
    [Q = I - V T V^T] and ANY matrices [U, Y, Z, M, H, W, X'] (the code's
    floats), with the rounding errors DEFINED as
    [E_U = U - V T^T], [E_Y = Y - X U], [E_Z = Z - V^T Y], [E_M = M - T Z],
    [E_H = H - V M], [E_W = W - (Y - H/2)], [E_5 = X' - (X - V W^T - W V^T)]
    and bounded in norm by [e_U, ..., e_5]:
    [||X' - Q X Q^T||_2 <= e_5 + 2 nu (h (e_Y + xi e_U) + nu (t e_Z + e_M)/2 + e_H/2 + e_W)]
    with [h = (1 + sqrt(1 + eps))/2], [nu >= ||V||], [t >= ||T||],
    [xi >= ||X||], [eps >= ||Q^T Q - I||] ([lemma_r3]).  The proof's two
    identities ([lemma_r3_dw], [lemma_r3_split]) are checked entrywise
    after normalising products (associativity, transposes; functional
    extensionality, an allowed axiom, lets them be rewritten as
    equalities of matrices). *)

From Coq Require Import FunctionalExtensionality.

Definition msub (A B : nat -> nat -> R) : nat -> nat -> R := fun i j => A i j - B i j.
Definition madd (A B : nat -> nat -> R) : nat -> nat -> R := fun i j => A i j + B i j.
Definition mscal (c : R) (A : nat -> nat -> R) : nat -> nat -> R := fun i j => c * A i j.

Lemma mmul_assoc_f : forall p q A B C, mmul q (mmul p A B) C = mmul p A (mmul q B C).
Proof. intros. do 2 (apply functional_extensionality; intros). apply mmul_assoc. Qed.

Lemma mtr_mmul_f : forall k A B, mtr (mmul k A B) = mmul k (mtr B) (mtr A).
Proof. intros. do 2 (apply functional_extensionality; intros). apply mtr_mmul. Qed.

Lemma mtr_mtr_f : forall A : nat -> nat -> R, mtr (mtr A) = A.
Proof. reflexivity. Qed.

Lemma mtr_msub_f : forall A B, mtr (msub A B) = msub (mtr A) (mtr B).
Proof. reflexivity. Qed.

Lemma mtr_madd_f : forall A B, mtr (madd A B) = madd (mtr A) (mtr B).
Proof. reflexivity. Qed.

Lemma mtr_mscal_f : forall c A, mtr (mscal c A) = mscal c (mtr A).
Proof. reflexivity. Qed.

Lemma mmul_msub_r_f : forall k A B C, mmul k A (msub B C) = msub (mmul k A B) (mmul k A C).
Proof. intros. do 2 (apply functional_extensionality; intros). unfold msub. apply mmul_sub_r. Qed.

Lemma mmul_msub_l_f : forall k A B C, mmul k (msub A B) C = msub (mmul k A C) (mmul k B C).
Proof. intros. do 2 (apply functional_extensionality; intros). unfold msub. apply mmul_sub_l. Qed.

Lemma mmul_madd_r_f : forall k A B C, mmul k A (madd B C) = madd (mmul k A B) (mmul k A C).
Proof.
  intros. do 2 (apply functional_extensionality; intros). unfold madd, mmul. rewrite <- rsum_add.
  apply rsum_ext. intros; ring.
Qed.

Lemma mmul_madd_l_f : forall k A B C, mmul k (madd A B) C = madd (mmul k A C) (mmul k B C).
Proof.
  intros. do 2 (apply functional_extensionality; intros). unfold madd, mmul. rewrite <- rsum_add.
  apply rsum_ext. intros; ring.
Qed.

Lemma mmul_mscal_r_f : forall k c A B, mmul k A (mscal c B) = mscal c (mmul k A B).
Proof.
  intros. do 2 (apply functional_extensionality; intros). unfold mscal, mmul. rewrite <- rsum_scal.
  apply rsum_ext. intros; ring.
Qed.

Lemma mmul_mscal_l_f : forall k c A B, mmul k (mscal c A) B = mscal c (mmul k A B).
Proof.
  intros. do 2 (apply functional_extensionality; intros). unfold mscal, mmul. rewrite <- rsum_scal.
  apply rsum_ext. intros; ring.
Qed.

Ltac mnorm :=
  repeat (rewrite ?mtr_mmul_f, ?mtr_msub_f, ?mtr_madd_f, ?mtr_mscal_f, ?mtr_mtr_f,
                  ?mmul_msub_r_f, ?mmul_msub_l_f, ?mmul_madd_r_f, ?mmul_madd_l_f,
                  ?mmul_mscal_r_f, ?mmul_mscal_l_f, ?mmul_assoc_f).

Section LemmaR3.
Variables (n b : nat) (X V T U Y Z M H W Xp : nat -> nat -> R).
Hypothesis X_symm : forall i j, X i j = X j i.
Variables (nu t xi eps eU eY eZ eM eH eW e5 : R).

Let P := mmul b (mmul b V T) (mtr V).
Let Q := msub idm P.
Let Y0 := mmul b (mmul n X V) (mtr T).
Let M0 := mmul n (mmul b T (mtr V)) Y0.
Let dY := msub Y Y0.
Let EU := msub U (mmul b V (mtr T)).
Let EY := msub Y (mmul n X U).
Let EZ := msub Z (mmul n (mtr V) Y).
Let EM := msub M (mmul b T Z).
Let EH := msub H (mmul b V M).
Let EW := msub W (msub Y (mscal (/ 2) H)).
Let E5 := msub Xp (msub (msub X (mmul b V (mtr W))) (mmul b W (mtr V))).
Let DW := madd (msub W Y0) (mscal (/ 2) (mmul b V M0)).

Lemma X_tr : mtr X = X.
Proof. do 2 (apply functional_extensionality; intros). unfold mtr. apply X_symm. Qed.

(** [Delta_W = (I + Q)/2 dY - V (T E_Z + E_M)/2 - E_H/2 + E_W]. *)
Lemma lemma_r3_dw : forall a l, (a < n)%nat ->
  DW a l = / 2 * (dY a l + mmul n Q dY a l) - / 2 * mmul b V (madd (mmul b T EZ) EM) a l - / 2 * EH a l + EW a l.
Proof.
  intros a l Ha. unfold Q. rewrite mmul_msub_l_f. unfold msub at 1.
  rewrite mmul_idm_l by exact Ha.
  unfold DW, dY, EZ, EM, EH, EW, P, M0, Y0. mnorm.
  unfold msub, madd, mscal. field.
Qed.

(** [Q X Q^T = X - P X - X P^T + P X P^T] entrywise. *)
Lemma congr_expand : forall a c, (a < n)%nat -> (c < n)%nat ->
  mmul n (mmul n Q X) (mtr Q) a c = X a c - mmul n P X a c - mmul n X (mtr P) a c + mmul n (mmul n P X) (mtr P) a c.
Proof.
  intros a c Ha Hc. unfold Q. repeat rewrite ?mmul_msub_l_f, ?mtr_msub_f, ?mmul_msub_r_f. unfold msub.
  rewrite (mmul_idm_tr n (mmul n idm X)) by exact Hc. rewrite (mmul_idm_tr n (mmul n P X)) by exact Hc.
  rewrite (mmul_idm_l n X) by exact Ha.
  rewrite (mmul_ext_l n (mmul n idm X) X (mtr P) a c) by (intros; apply mmul_idm_l; exact Ha). ring.
Qed.

(** [X' - Q X Q^T = E_5 - (V Delta_W^T + Delta_W V^T)]. *)
Lemma lemma_r3_split : forall a c, (a < n)%nat -> (c < n)%nat ->
  Xp a c - mmul n (mmul n Q X) (mtr Q) a c = E5 a c - mmul b V (mtr DW) a c - mmul b DW (mtr V) a c.
Proof.
  intros a c Ha Hc. rewrite congr_expand by assumption.
  unfold E5, DW, P, M0, Y0. mnorm. rewrite ?X_tr. mnorm.
  unfold msub, madd, mscal. field.
Qed.

Hypothesis V_bound : opbound n b V nu.
Hypothesis T_bound : opbound b b T t.
Hypothesis X_bound : opbound n n X xi.
Hypothesis Q_bound : opbound n n (fun a c => mmul n (mtr Q) Q a c - idm a c) eps.
Hypothesis EU_bound : opbound n b EU eU.
Hypothesis EY_bound : opbound n b EY eY.
Hypothesis EZ_bound : opbound b b EZ eZ.
Hypothesis EM_bound : opbound b b EM eM.
Hypothesis EH_bound : opbound n b EH eH.
Hypothesis EW_bound : opbound n b EW eW.
Hypothesis E5_bound : opbound n n E5 e5.
Hypothesis eps_nonneg : 0 <= eps.

Lemma opbound_idm : forall k, opbound k k idm 1.
Proof.
  intros k. split; [lra|]. intros y. rewrite (nsq_ext k (mv k idm y) y) by (intros; apply mv_idm; assumption). lra.
Qed.

Lemma opbound_madd : forall m k A B a c, opbound m k A a -> opbound m k B c -> opbound m k (madd A B) (a + c).
Proof. intros. apply opbound_add; assumption. Qed.

Lemma opbound_mscal : forall m k A a c, opbound m k A a -> opbound m k (mscal c A) (Rabs c * a).
Proof. intros. apply opbound_scal; assumption. Qed.

Lemma Rabs_mhalf : Rabs (- / 2) = / 2.
Proof. rewrite Rabs_Ropp, Rabs_pos_eq by lra. reflexivity. Qed.

Theorem lemma_r3 :
  opbound n n (fun a c => Xp a c - mmul n (mmul n Q X) (mtr Q) a c)
    (e5 + 2 * nu * (/ 2 * (1 + sqrt (1 + eps)) * (eY + xi * eU) + / 2 * nu * (t * eZ + eM) + / 2 * eH + eW)).
Proof.
  assert (Hnu : 0 <= nu) by (destruct V_bound; assumption).
  (* [dY = E_Y + X E_U] *)
  assert (HdY : opbound n b dY (eY + xi * eU)).
  { apply (opbound_ext n b (madd EY (mmul n X EU))).
    - intros p q Hp Hq. unfold EY, EU, dY, Y0. mnorm. unfold madd, msub. ring.
    - apply opbound_madd; [exact EY_bound|apply opbound_mul; assumption]. }
  assert (HQ : opbound n n Q (sqrt (1 + eps))) by (apply block_norm; assumption).
  assert (Hh : opbound n n (mscal (/ 2) (madd idm Q)) (/ 2 * (1 + sqrt (1 + eps)))).
  { rewrite <- (Rabs_pos_eq (/ 2)) at 2 by lra. apply opbound_mscal, opbound_madd; [apply opbound_idm|exact HQ]. }
  set (dw := / 2 * (1 + sqrt (1 + eps)) * (eY + xi * eU) + / 2 * nu * (t * eZ + eM) + / 2 * eH + eW).
  assert (HDW : opbound n b DW dw).
  { apply (opbound_ext n b (madd (madd (madd (mmul n (mscal (/ 2) (madd idm Q)) dY)
                                            (mscal (- / 2) (mmul b V (madd (mmul b T EZ) EM))))
                                      (mscal (- / 2) EH)) EW)).
    - intros p q Hp Hq. rewrite lemma_r3_dw by exact Hp. rewrite mmul_mscal_l_f, mmul_madd_l_f.
      unfold mscal, madd. rewrite mmul_idm_l by exact Hp. field.
    - replace dw with (/ 2 * (1 + sqrt (1 + eps)) * (eY + xi * eU) + Rabs (- / 2) * (nu * (t * eZ + eM))
                       + Rabs (- / 2) * eH + eW) by (rewrite Rabs_mhalf; unfold dw; ring).
      apply opbound_madd; [apply opbound_madd; [apply opbound_madd|]|exact EW_bound].
      + apply opbound_mul; assumption.
      + apply opbound_mscal. apply opbound_mul; [exact V_bound|]. apply opbound_madd; [apply opbound_mul|]; assumption.
      + apply opbound_mscal. exact EH_bound. }
  apply (opbound_ext n n (madd E5 (mscal (-1) (madd (mmul b V (mtr DW)) (mmul b DW (mtr V)))))).
  - intros p q Hp Hq. rewrite lemma_r3_split by assumption. unfold madd, mscal. ring.
  - assert (Hm1 : Rabs (-1) = 1) by (unfold Rabs; destruct (Rcase_abs (-1)); lra).
    replace (e5 + 2 * nu * dw) with (e5 + Rabs (-1) * (nu * dw + dw * nu)) by (rewrite Hm1; ring).
    apply opbound_madd; [exact E5_bound|]. apply opbound_mscal.
    apply opbound_madd; apply opbound_mul; [exact V_bound|apply opbound_transpose; exact HDW|exact HDW|apply opbound_transpose; exact V_bound].
Qed.

End LemmaR3.

(** ** The float evaluation ([reconstruct._static_bounds], [_bounds]; §5)

    Every bound quantity is a float [>=] the exact one, every operation of
    the formulas is followed by one step up ([_up] = [succ]; [OneStep.v]),
    so each float formula bounds the exact formula (monotone,
    nonnegative).  The code's [0.5] is the float [/ 2]. *)

From Flocq Require Import Core.
From Certbound Require Import FPModel OneStep.
Local Notation succ := (succ radix2 fexp).
Local Notation pred := (pred radix2 fexp).

Lemma up_nonneg' : forall y, 0 <= y -> 0 <= succ (fl y).
Proof. exact up_nonneg. Qed.

(** Lemma R.1's [eps_j] and [nu_j]: [K_ = up(up(2 up(t2 F)) + up(up(t2 t2) eS))],
    [eps = up(K_ up(s2 + eS))], [nu = up(sqrt(up(s2 + eS)))]. *)
Theorem gr_eps_float : forall t f eS sS t2 F eSf s2,
  0 <= t <= t2 -> 0 <= f <= F -> 0 <= eS <= eSf -> 0 <= sS <= s2 ->
  (2 * t * f + t * t * eS) * (sS + eS)
    <= succ (fl (succ (fl (succ (fl (2 * succ (fl (t2 * F)))) + succ (fl (succ (fl (t2 * t2)) * eSf)))) *
                 succ (fl (s2 + eSf)))) /\
  sqrt (sS + eS) <= succ (fl (sqrt (succ (fl (s2 + eSf))))).
Proof.
  intros t f eS sS t2 F eSf s2 Ht Hf He Hs. split.
  - apply up_mul; [split; [nra|]|split; [lra|apply up_add; lra]].
    apply up_add.
    + replace (2 * t * f) with (2 * (t * f)) by ring. apply up_mul; [lra|split; [nra|apply up_mul; lra]].
    + apply up_mul; [split; [nra|apply up_mul; lra]|lra].
  - apply up_sqrt. apply up_add; lra.
Qed.

(** Lemma R.2's product, as the code accumulates it: [Pr_0 = 1],
    [Pr_(j+1) = up(Pr_j * up(fl(1 + eps_j)))]; [alpha = fl(Pr - 1) = Pr - 1]
    (Sterbenz) when [Pr < 2]. *)
Fixpoint prf (epsf : nat -> R) (m : nat) : R :=
  match m with
  | O => 1
  | S m' => succ (fl (prf epsf m' * succ (fl (1 + epsf m'))))
  end.

Lemma pprod_snoc : forall g m a, pprod g a (S m) = pprod g a m * g (a + m)%nat.
Proof.
  intros g m. induction m as [|m IH]; intros a; simpl.
  - rewrite Nat.add_0_r. ring.
  - simpl in IH. rewrite IH. replace (S a + m)%nat with (a + S m)%nat by lia. ring.
Qed.

Lemma pprod_ge1 : forall (eps : nat -> R) a m, (forall j, 0 <= eps j) -> 1 <= pprod (fun j => 1 + eps j) a m.
Proof.
  intros eps a m H. revert a. induction m as [|m IH]; intros a; simpl; [lra|].
  specialize (IH (S a)). pose proof (H a). nra.
Qed.

Theorem gr_product_float : forall (eps epsf : nat -> R) K,
  (forall j, 0 <= eps j <= epsf j) ->
  pprod (fun j => 1 + eps j) 0 K <= prf epsf K /\ 1 <= prf epsf K /\ format (prf epsf K).
Proof.
  intros eps epsf K H. pose proof H as H0. induction K as [|K IH].
  - simpl. split; [lra|split; [lra|apply format_1]].
  - destruct IH as (H1 & H2 & _). rewrite pprod_snoc. simpl prf. specialize (H K). rewrite Nat.add_0_l.
    assert (Hp : 0 <= pprod (fun j => 1 + eps j) 0 K).
    { assert (1 <= pprod (fun j => 1 + eps j) 0 K); [|lra]. apply pprod_ge1. intros j. apply (H0 j). }
    split; [|split; [|apply up_format]].
    + apply up_mul; [split; lra|split; [lra|apply up_add; lra]].
    + apply step_up. assert (1 <= succ (fl (1 + epsf K))) by (apply step_up; lra). nra.
Qed.

Theorem gr_alpha_exact : forall Pr, format Pr -> 1 <= Pr < 2 -> fl (Pr - 1) = Pr - 1.
Proof. intros Pr HF HP. apply (f5_sterbenz Pr 1 HF format_1). lra. Qed.

(** Lemma R.3's [Delta_j] as [_bounds] evaluates it. *)
Theorem gr_delta_float : forall e5 nu t xi eps eU eY eZ eM eH eW e5f nuf t2 xif epsf eUf eYf eZf eMf eHf eWf,
  0 <= e5 <= e5f -> 0 <= nu <= nuf -> 0 <= t <= t2 -> 0 <= xi <= xif -> 0 <= eps <= epsf ->
  0 <= eU <= eUf -> 0 <= eY <= eYf -> 0 <= eZ <= eZf -> 0 <= eM <= eMf -> 0 <= eH <= eHf -> 0 <= eW <= eWf ->
  let hq := succ (fl (/ 2 * succ (fl (1 + succ (fl (sqrt (succ (fl (1 + epsf))))))))) in
  let dYf := succ (fl (eYf + succ (fl (xif * eUf)))) in
  let inner := succ (fl (succ (fl (succ (fl (hq * dYf)) + succ (fl (/ 2 * succ (fl (nuf * succ (fl (succ (fl (t2 * eZf)) + eMf))))))))
                         + succ (fl (succ (fl (/ 2 * eHf)) + eWf)))) in
  e5 + 2 * nu * (/ 2 * (1 + sqrt (1 + eps)) * (eY + xi * eU) + / 2 * nu * (t * eZ + eM) + / 2 * eH + eW)
    <= succ (fl (e5f + succ (fl (2 * succ (fl (nuf * inner)))))).
Proof.
  intros e5 nu t xi eps eU eY eZ eM eH eW e5f nuf t2 xif epsf eUf eYf eZf eMf eHf eWf
    H5 Hnu Ht Hxi Heps HU HY HZ HM HH HW hq dYf inner.
  assert (Hs : 0 <= sqrt (1 + eps) <= succ (fl (sqrt (succ (fl (1 + epsf)))))).
  { split; [apply sqrt_pos|]. apply up_sqrt, up_add; lra. }
  assert (Hq : 0 <= / 2 * (1 + sqrt (1 + eps)) <= hq).
  { split; [apply Rmult_le_pos; lra|]. apply up_mul; [lra|]. split; [lra|]. apply up_add; lra. }
  assert (Hd : 0 <= eY + xi * eU <= dYf).
  { split; [nra|]. apply up_add; [lra|]. apply up_mul; lra. }
  assert (Hi1 : 0 <= t * eZ + eM <= succ (fl (succ (fl (t2 * eZf)) + eMf))).
  { split; [nra|]. apply up_add; [apply up_mul|]; lra. }
  assert (Hi2 : 0 <= / 2 * nu * (t * eZ + eM)
                <= succ (fl (/ 2 * succ (fl (nuf * succ (fl (succ (fl (t2 * eZf)) + eMf))))))).
  { split; [apply Rmult_le_pos; [apply Rmult_le_pos|]; lra|]. rewrite Rmult_assoc.
    apply up_mul; [lra|]. split; [nra|]. apply up_mul; lra. }
  assert (Hi3 : 0 <= / 2 * eH + eW <= succ (fl (succ (fl (/ 2 * eHf)) + eWf))).
  { split; [nra|]. apply up_add; [apply up_mul|]; lra. }
  assert (Hin : 0 <= / 2 * (1 + sqrt (1 + eps)) * (eY + xi * eU) + / 2 * nu * (t * eZ + eM) + / 2 * eH + eW <= inner).
  { split; [nra|]. unfold inner.
    replace (/ 2 * (1 + sqrt (1 + eps)) * (eY + xi * eU) + / 2 * nu * (t * eZ + eM) + / 2 * eH + eW)
      with (/ 2 * (1 + sqrt (1 + eps)) * (eY + xi * eU) + / 2 * nu * (t * eZ + eM) + (/ 2 * eH + eW)) by ring.
    apply up_add; [|lra]. apply up_add; [apply up_mul|]; lra. }
  apply up_add; [lra|]. replace (2 * nu * (/ 2 * (1 + sqrt (1 + eps)) * (eY + xi * eU) + / 2 * nu * (t * eZ + eM) + / 2 * eH + eW))
    with (2 * (nu * (/ 2 * (1 + sqrt (1 + eps)) * (eY + xi * eU) + / 2 * nu * (t * eZ + eM) + / 2 * eH + eW))) by ring.
  apply up_mul; [lra|]. split; [nra|]. apply up_mul; lra.
Qed.

(** [tot = up(tot + Delta_j)] over the blocks, [acc = up(Pr tot)]. *)
Fixpoint totf (deltaf : nat -> R) (m : nat) : R :=
  match m with
  | O => 0
  | S m' => succ (fl (totf deltaf m' + deltaf m'))
  end.

Theorem gr_total_float : forall (deltaf : nat -> R) K Pr, (forall j, 0 <= deltaf j) -> 0 <= Pr ->
  Pr * rsum K deltaf <= succ (fl (Pr * totf deltaf K)).
Proof.
  intros deltaf K Pr Hd HP. assert (H : 0 <= rsum K deltaf <= totf deltaf K).
  { induction K as [|K IH]; simpl; [lra|]. split.
    - pose proof (Hd K). lra.
    - apply up_add; [lra|lra]. }
  apply up_mul; lra.
Qed.

(** ** Theorem G-R from the code's floats

    [reconstruction_bounds]'s [alpha = fl(Pr - 1)] and
    [e_bar = up(r + acc)], for blocks [Q_j = I - V_j T_j V_j^T] ([b_j]
    live reflectors; [V_j] embedded [k x b_j]) whose
    exact norms are below the code's floats [t2_j, F_j, eS_j, s2_j] (Lemma
    T6, Lemma 2.1/2.5, Collatz-Wielandt: premises), [eps_j] and [Pr] as the
    code computes them ([eps_j < 1], [Pr < 2] checked), block [j]'s
    rounding bounded by the code's [delta_j] whenever the previous error is
    [<= cap] (Lemma R.3 with [gr_delta_float], on the trailing block), the
    check [acc <= cap] and [r >= ||G_hat - A0_hat||]: Theorem G-T's float
    ends enclose [sigma_i(W)]. *)
Theorem theorem_gr_float : forall k n (bs : nat -> nat) K (W Gh T : nat -> nat -> R) (Vs Ts Rs Ss X : nat -> nat -> nat -> R)
    (t2 F eSf s2 deltaf la lb : nat -> R) cap r beta c grow shrink i,
  (1 <= k)%nat -> (i < k)%nat -> symm k T ->
  (forall p, (p < k)%nat -> la p <= cf_eig k T p <= lb p) ->
  (forall j, forall p q, (p < bs j)%nat -> (q < bs j)%nat -> Ss j p q = Rs j p q + Rs j q p) ->
  (forall j, opbound (bs j) (bs j) (Ts j) (t2 j)) ->
  (forall j, opbound (bs j) (bs j) (fun p q => mmul (bs j) (Rs j) (Ts j) p q - idm p q) (F j)) ->
  (forall j, opbound (bs j) (bs j) (fun p q => mmul k (mtr (Vs j)) (Vs j) p q - Ss j p q) (eSf j)) ->
  (forall j, opbound (bs j) (bs j) (Ss j) (s2 j)) ->
  let epsf := fun j => succ (fl (succ (fl (succ (fl (2 * succ (fl (t2 j * F j)))) + succ (fl (succ (fl (t2 j * t2 j)) * eSf j))))
                                 * succ (fl (s2 j + eSf j)))) in
  let Qs := fun j a c => idm a c - mmul (bs j) (mmul (bs j) (Vs j) (Ts j)) (mtr (Vs j)) a c in
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
  intros k n bs K W Gh T Vs Ts Rs Ss X t2 F eSf s2 deltaf la lb cap r beta c grow shrink i
    Hk Hi HT Hbr Hsplit HTb HFb HEb HSb epsf Qs Heps1 Pr HPr HDl HXK HD Hacc HG alpha ebar HB Hc Hg Hs.
  assert (Hnn : forall j, 0 <= t2 j /\ 0 <= F j /\ 0 <= eSf j /\ 0 <= s2 j).
  { intros j. destruct (HTb j), (HFb j), (HEb j), (HSb j). repeat split; assumption. }
  (* each block: Lemma R.1 with the code's floats *)
  assert (Hblk : forall j, opbound k k (fun a c => mmul k (mtr (Qs j)) (Qs j) a c - idm a c) (epsf j)).
  { intros j. destruct (Hnn j) as (H1 & H2 & H3 & H4).
    destruct (lemma_r1 k (bs j) (Vs j) (Ts j) (Rs j) (Ss j) (t2 j) (F j) (eSf j) (s2 j) (Hsplit j) (HTb j) (HFb j) (HEb j) (HSb j))
      as [HR1 _].
    apply (opbound_weaken _ _ _ _ _ HR1). unfold epsf.
    destruct (gr_eps_float (t2 j) (F j) (eSf j) (s2 j) (t2 j) (F j) (eSf j) (s2 j)) as [E _]; try lra; exact E. }
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
