(** * One step outward (Lemma 10.1) and monotone chaining

    Backs [proofs/enclosure.md] §10 (Lemma 10.1, and "every scalar finishing
    operation ... followed by one step up (Lemma 10.1, with monotonicity:
    all operands are nonnegative upper bounds)"); code:
    [certbound/enclose/_stacked.py] ([up], [down] and the float finishing of
    [norm2_upper], [abs_product_norm2_upper], [gram_deviation_upper],
    [residual_norm_upper]), [product._sqrt_product_bounds],
    [product._core_fast_stacked], [product._certify_stack],
    [product._gram_factor_stack], [svd.theorem_r_float_bounds].

    Model.  A binary64 [+, -, *, /, sqrt] whose result [r] is finite returns
    the exact real result [x] rounded to nearest ([FPModel.fl]; Flocq's
    [round] has no overflow, and where IEEE's result is finite the two
    agree).  [np.nextafter(r, +inf)] of a finite float [r < MAX] is the least
    float above [r], Flocq's [succ radix2 fexp r] ([succ_gt_ge]: no float in
    between; the subnormal spacing [2^-1074] included, [succ 0 = 2^-1074]);
    [np.nextafter(r, -inf)] is [pred r].  At [+-MAX] numpy returns [+-inf],
    which bounds everything on its side; the code treats a non-finite upper
    bound as failure (and clamps a [-inf] lower bound to [0]).

    Lemma 10.1 holds for EVERY rounding of the format (any tie rule, even a
    directed or faithful rounding: [one_step_outward_any]), because [x] lies
    between the two floats around it and [round x] is one of them. *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core.
From Certbound Require Import FPModel.
Open Scope R_scope.

Local Notation succ := (succ radix2 fexp).
Local Notation pred := (pred radix2 fexp).

(** Lemma 10.1 for any rounding of binary64 ([FLT_exp (-1074) 53], gradual
    underflow). *)
Theorem one_step_outward_any :
  forall rnd {Hrnd : Valid_rnd rnd} x,
  pred (round radix2 fexp rnd x) <= x <= succ (round radix2 fexp rnd x).
Proof.
  intros rnd Hrnd x. split.
  - apply pred_round_le_id; auto with typeclass_instances.
  - apply succ_round_ge_id; auto with typeclass_instances.
Qed.

(** Round to nearest with any tie rule ([Znearest choice]). *)
Theorem one_step_outward_nearest :
  forall (choice : Z -> bool) x,
  pred (round radix2 fexp (Znearest choice) x) <= x <= succ (round radix2 fexp (Znearest choice) x).
Proof. intros choice x. apply one_step_outward_any; auto with typeclass_instances. Qed.

(** Lemma 10.1 for the IEEE default (ties to even), [x] the exact result
    [a + b], [a - b], [a * b], [a / b] or [sqrt a]. *)
Theorem one_step_outward : forall x, pred (fl x) <= x <= succ (fl x).
Proof. intros x. apply one_step_outward_any; auto with typeclass_instances. Qed.

(** The stepped values are floats, and a step up from a nonnegative result
    stays nonnegative (so chains of nonnegative upper bounds stay
    nonnegative). *)
Lemma up_format : forall y, format (succ (fl y)).
Proof. intros y. apply generic_format_succ; [auto with typeclass_instances | apply fl_format]. Qed.

Lemma down_format : forall y, format (pred (fl y)).
Proof. intros y. apply generic_format_pred; [auto with typeclass_instances | apply fl_format]. Qed.

Lemma up_nonneg : forall y, 0 <= y -> 0 <= succ (fl y).
Proof. intros y Hy. pose proof (one_step_outward y). lra. Qed.

(** A float [>= 0] stepped down is [>= 0] when it was [> 0]: used for
    [down(1 - a)] with [a < 1]. *)
Lemma down_pos_nonneg : forall y, 0 < fl y -> 0 <= pred (fl y).
Proof. intros y Hy. apply pred_ge_0; [auto with typeclass_instances | exact Hy | apply fl_format]. Qed.

(** ** Monotone chaining.  If the exact quantity [q] is at most [y] (by
    monotonicity of the operation in its operands and the operands' bounds),
    then one rounded operation on the bounds followed by one step up is
    still [>= q]; dually downward. *)
Lemma step_up : forall q y, q <= y -> q <= succ (fl y).
Proof. intros q y H. pose proof (one_step_outward y). lra. Qed.

Lemma step_down : forall q y, y <= q -> pred (fl y) <= q.
Proof. intros q y H. pose proof (one_step_outward y). lra. Qed.

(** Upper bounds ([up(A op B)] in the code). *)
Lemma up_add : forall a b A B, a <= A -> b <= B -> a + b <= succ (fl (A + B)).
Proof. intros. apply step_up. lra. Qed.

Lemma up_sub : forall a b A B, a <= A -> B <= b -> a - b <= succ (fl (A - B)).
Proof. intros. apply step_up. lra. Qed.

Lemma up_mul : forall a b A B, 0 <= a <= A -> 0 <= b <= B -> a * b <= succ (fl (A * B)).
Proof. intros. apply step_up. apply Rmult_le_compat; lra. Qed.

Lemma up_div : forall a b A B, 0 <= a <= A -> 0 < B <= b -> a / b <= succ (fl (A / B)).
Proof.
  intros a b A B Ha Hb. apply step_up. unfold Rdiv.
  apply Rmult_le_compat; [lra | left; apply Rinv_0_lt_compat; lra | lra |].
  apply Rinv_le_contravar; lra.
Qed.

Lemma up_sqrt : forall a A, a <= A -> sqrt a <= succ (fl (sqrt A)).
Proof. intros. apply step_up. apply sqrt_le_1_alt. exact H. Qed.

(** Lower bounds ([down(A op B)]). *)
Lemma down_add : forall a b A B, A <= a -> B <= b -> pred (fl (A + B)) <= a + b.
Proof. intros. apply step_down. lra. Qed.

Lemma down_sub : forall a b A B, A <= a -> b <= B -> pred (fl (A - B)) <= a - b.
Proof. intros. apply step_down. lra. Qed.

Lemma down_mul : forall a b A B, 0 <= A <= a -> 0 <= B <= b -> pred (fl (A * B)) <= a * b.
Proof. intros. apply step_down. apply Rmult_le_compat; lra. Qed.

Lemma down_sqrt : forall a A, A <= a -> pred (fl (sqrt A)) <= sqrt a.
Proof. intros. apply step_down. apply sqrt_le_1_alt. exact H. Qed.

(** ** Any chain.  An expression of [+], [*], [sqrt] and division by a
    quantity with a positive lower bound, over nonnegative exact quantities
    with float (or any real) upper bounds at the leaves, evaluated with one
    rounded operation and one step up per node, is an upper bound of its
    exact value, which is nonnegative.  This is the §10 argument for every
    finishing chain of [_stacked] (e.g. [norm2_upper]'s
    [up(sqrt(up(up(s + 2k eta) * c)))], [_gram_factor_stack]'s
    [up(up(rinv * rinv) * up(errG + eRR))], [up(norm2_upper(X) / down(1 - delta))]). *)
Inductive uexpr : Type :=
  | Leaf (q b : R)                  (** exact [q], upper bound [b] *)
  | Add (x y : uexpr)
  | Mul (x y : uexpr)
  | Sqrt (x : uexpr)
  | DivBy (x : uexpr) (q l : R).    (** [x / q], [l]: lower bound of [q] *)

Fixpoint exact (t : uexpr) : R :=
  match t with
  | Leaf q _ => q
  | Add x y => exact x + exact y
  | Mul x y => exact x * exact y
  | Sqrt x => sqrt (exact x)
  | DivBy x q _ => exact x / q
  end.

Fixpoint up_eval (t : uexpr) : R :=
  match t with
  | Leaf _ b => b
  | Add x y => succ (fl (up_eval x + up_eval y))
  | Mul x y => succ (fl (up_eval x * up_eval y))
  | Sqrt x => succ (fl (sqrt (up_eval x)))
  | DivBy x _ l => succ (fl (up_eval x / l))
  end.

Fixpoint leaves_ok (t : uexpr) : Prop :=
  match t with
  | Leaf q b => 0 <= q <= b
  | Add x y | Mul x y => leaves_ok x /\ leaves_ok y
  | Sqrt x => leaves_ok x
  | DivBy x q l => leaves_ok x /\ 0 < l <= q
  end.

Theorem up_chain : forall t, leaves_ok t -> 0 <= exact t <= up_eval t.
Proof.
  induction t as [q b | x IHx y IHy | x IHx y IHy | x IHx | x IHx q l]; simpl; intros H.
  - exact H.
  - destruct H as [Hx Hy]. specialize (IHx Hx). specialize (IHy Hy).
    split; [lra | apply up_add; lra].
  - destruct H as [Hx Hy]. specialize (IHx Hx). specialize (IHy Hy).
    split; [apply Rmult_le_pos; lra | apply up_mul; lra].
  - specialize (IHx H). split; [apply sqrt_pos | apply up_sqrt; lra].
  - destruct H as [Hx Hl]. specialize (IHx Hx). split.
    + unfold Rdiv. apply Rmult_le_pos; [lra | left; apply Rinv_0_lt_compat; lra].
    + apply up_div; lra.
Qed.

(** ** The hull balls of [svd._hull_balls] ([proofs/enclosure.md] §1, Balls)

    For float ends [lo], [hi] and ANY float [m] (the code's
    [fl(fl(lo/2) + fl(hi/2))]), [r = nextafter(max(|fl(hi - m)|,
    |fl(m - lo)|), +inf)] satisfies [m - r <= lo] and [hi <= m + r], so the
    ball [arb(m, r)] (radius rounded up by Arb: F6) contains [[lo, hi]]. *)
Lemma abs_fl : forall x, Rabs (fl x) = fl (Rabs x).
Proof.
  intros x. unfold Rabs at 2. destruct (Rcase_abs x) as [Hx|Hx].
  - rewrite fl_opp. apply Rabs_left1. rewrite <- fl_0. apply fl_le. lra.
  - apply Rabs_pos_eq. rewrite <- fl_0. apply fl_le. lra.
Qed.

Theorem hull_ball_radius : forall lo hi m, format lo -> format hi -> format m ->
  let r := succ (Rmax (Rabs (fl (hi - m))) (Rabs (fl (m - lo)))) in
  m - r <= lo /\ hi <= m + r.
Proof.
  intros lo hi m Hlo Hhi Hm r.
  assert (HF : forall x, format (Rabs (fl x))) by (intros x; apply generic_format_abs, fl_format).
  assert (HM : format (Rmax (Rabs (fl (hi - m))) (Rabs (fl (m - lo))))).
  { unfold Rmax. destruct (Rle_dec _ _); apply HF. }
  assert (Hup : forall x, Rabs (fl x) <= Rmax (Rabs (fl (hi - m))) (Rabs (fl (m - lo))) -> Rabs x <= r).
  { intros x Hx. unfold r. eapply Rle_trans; [apply (one_step_outward (Rabs x))|].
    apply succ_le; [auto with typeclass_instances|apply fl_format|exact HM|]. rewrite <- abs_fl. exact Hx. }
  pose proof (Hup (hi - m) (Rmax_l _ _)) as H1. pose proof (Hup (m - lo) (Rmax_r _ _)) as H2.
  apply Rabs_le_inv in H1. apply Rabs_le_inv in H2. lra.
Qed.
