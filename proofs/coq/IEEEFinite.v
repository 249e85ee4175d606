(** * Overflow: a finite result certifies that nothing overflowed

    Backs [proofs/enclosure.md] §2 (Model: "an overflow produces +-inf or
    NaN, which every function here detects and turns into an infinite
    bound") and Lemma 3.3's *Finiteness* ("finite Sigma_c certify finite
    floats everywhere"); [proofs/coq/README.md], "What the model covers".

    Every other file uses Flocq's real rounding [FPModel.fl], which has no
    overflow.  Here the IEEE 754 binary64 operations themselves (Flocq's
    [BinarySingleNaN]: signed zeros, subnormals, infinities, NaN; round to
    nearest even) are related to it: for ANY expression built from float
    inputs by [+], [-], [*], FMA ([a*b+c], one rounding), [sqrt] and [|.|]
    — every float computation of the certificates up to a final sum,
    maximum or quotient that the code tests with [np.isfinite] (dot
    products and GEMM entries in any order, the residual
    [fl(W - fl(X V))], the sums of squares of [_sumsq_upper], [_inflate]'s
    [(v + c) * f]) — a FINITE IEEE result means that every intermediate
    was finite (no overflow, no NaN anywhere) and that the result is
    exactly the value of the same expression in the [fl] model
    ([finite_expr_is_fl_model]).  So the theorems of the other files,
    proved in the [fl] model, apply to every computation the code accepts.

    Not covered, and handled otherwise by the code: a division can hide an
    infinity ([x / inf = 0]) — every division of the certificates has a
    divisor that is itself checked finite and nonzero (the Sturm pivots,
    [SturmFloat.v]; Lemma G.2's [z / x] with [x > 0] finite) and
    [Bdiv_finite] below covers that case; a maximum can hide a [-inf] —
    the code takes maxima of nonnegative values only. *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core.
From Flocq Require IEEE754.BinarySingleNaN.
From Certbound Require Import FPModel.
Open Scope R_scope.

Module BS := Flocq.IEEE754.BinarySingleNaN.

(** binary64: 53-bit significands, largest exponent [2^1024] (so
    [SpecFloat.emin 53 1024 = -1074], the [FPModel] format). *)
Definition emax : Z := 1024.
#[export] Instance prec_lt_emax : BS.Prec_lt_emax prec emax.
Proof. unfold BS.Prec_lt_emax, prec, emax. lia. Qed.

Notation b64 := (BS.binary_float prec emax).
Notation B2R := (@BS.B2R prec emax).
Notation is_finite := (@BS.is_finite prec emax).
Notation Bplus := (@BS.Bplus prec emax _ _ BS.mode_NE).
Notation Bminus := (@BS.Bminus prec emax _ _ BS.mode_NE).
Notation Bmult := (@BS.Bmult prec emax _ _ BS.mode_NE).
Notation Bdiv := (@BS.Bdiv prec emax _ _ BS.mode_NE).
Notation Bfma := (@BS.Bfma prec emax _ _ BS.mode_NE).
Notation Bsqrt := (@BS.Bsqrt prec emax _ _ BS.mode_NE).
Notation Babs := (@BS.Babs prec emax).

(** IEEE's rounding is [FPModel.fl]. *)
Lemma B2R_round : forall x,
  round radix2 (SpecFloat.fexp prec emax) (BS.round_mode BS.mode_NE) x = fl x.
Proof. intros x. reflexivity. Qed.

Lemma B2R_format : forall x : b64, format (B2R x).
Proof. intros x. apply (BS.generic_format_B2R prec emax x). Qed.

Lemma overflow_not_finite : forall (z : b64) s,
  BS.B2SF z = BS.binary_overflow prec emax BS.mode_NE s -> is_finite z = false.
Proof. intros z s H. destruct z; simpl in *; try reflexivity; discriminate. Qed.

(** ** One operation: a finite result has finite operands and is the
    [fl] value of the exact result. *)
Lemma Bplus_finite : forall x y : b64,
  is_finite (Bplus x y) = true ->
  is_finite x = true /\ is_finite y = true /\ B2R (Bplus x y) = fl (B2R x + B2R y).
Proof.
  intros x y H.
  assert (Hx : is_finite x = true /\ is_finite y = true).
  { destruct x as [sx|sx| |sx mx ex Hx]; destruct y as [sy|sy| |sy my ey Hy];
      simpl in H |- *; auto;
      try (destruct (Bool.eqb sx sy); simpl in H; discriminate). }
  destruct Hx as [Hx Hy]. split; [exact Hx|split; [exact Hy|]].
  pose proof (BS.Bplus_correct prec emax _ _ BS.mode_NE x y Hx Hy) as C.
  destruct (Rlt_bool _ _) in C.
  - apply C.
  - destruct C as [C _]. apply overflow_not_finite in C. congruence.
Qed.

Lemma Bminus_finite : forall x y : b64,
  is_finite (Bminus x y) = true ->
  is_finite x = true /\ is_finite y = true /\ B2R (Bminus x y) = fl (B2R x - B2R y).
Proof.
  intros x y H.
  assert (Hx : is_finite x = true /\ is_finite y = true).
  { destruct x as [sx|sx| |sx mx ex Hx]; destruct y as [sy|sy| |sy my ey Hy];
      simpl in H |- *; auto;
      try (destruct (Bool.eqb sx (negb sy)); simpl in H; discriminate). }
  destruct Hx as [Hx Hy]. split; [exact Hx|split; [exact Hy|]].
  pose proof (BS.Bminus_correct prec emax _ _ BS.mode_NE x y Hx Hy) as C.
  destruct (Rlt_bool _ _) in C.
  - apply C.
  - destruct C as [C _]. apply overflow_not_finite in C. congruence.
Qed.

Lemma Bmult_finite : forall x y : b64,
  is_finite (Bmult x y) = true ->
  is_finite x = true /\ is_finite y = true /\ B2R (Bmult x y) = fl (B2R x * B2R y).
Proof.
  intros x y H.
  pose proof (BS.Bmult_correct prec emax _ _ BS.mode_NE x y) as C.
  destruct (Rlt_bool _ _) in C.
  - destruct C as (C1 & C2 & _). rewrite C2 in H. apply andb_prop in H.
    destruct H as [Hx Hy]. auto.
  - apply overflow_not_finite in C. congruence.
Qed.

Lemma Bfma_finite : forall x y z : b64,
  is_finite (Bfma x y z) = true ->
  is_finite x = true /\ is_finite y = true /\ is_finite z = true /\
  B2R (Bfma x y z) = fl (B2R x * B2R y + B2R z).
Proof.
  intros x y z H.
  assert (Hf : is_finite x = true /\ is_finite y = true /\ is_finite z = true).
  { destruct x as [sx|sx| |sx mx ex Hx]; destruct y as [sy|sy| |sy my ey Hy];
      destruct z as [sz|sz| |sz mz ez Hz];
      try (split; [reflexivity|split; reflexivity]);
      simpl in H; try discriminate;
      try (destruct (Bool.eqb (xorb sx sy) sz); discriminate). }
  destruct Hf as (Hx & Hy & Hz). refine (conj Hx (conj Hy (conj Hz _))).
  pose proof (BS.Bfma_correct prec emax _ _ BS.mode_NE x y z Hx Hy Hz) as C. simpl in C.
  destruct (Rlt_bool _ _) in C.
  - apply C.
  - apply overflow_not_finite in C. congruence.
Qed.

Lemma Bsqrt_finite : forall x : b64,
  is_finite (Bsqrt x) = true -> is_finite x = true /\ B2R (Bsqrt x) = fl (sqrt (B2R x)).
Proof.
  intros x H. destruct (BS.Bsqrt_correct prec emax _ _ BS.mode_NE x) as (C1 & C2 & _).
  split; [|exact C1]. rewrite C2 in H. destruct x as [s|s| |[|] mx ex Hx]; try reflexivity; discriminate.
Qed.

Lemma Babs_finite : forall x : b64,
  is_finite (Babs x) = true -> is_finite x = true /\ B2R (Babs x) = Rabs (B2R x).
Proof.
  intros x H. rewrite BS.is_finite_Babs in H. split; [exact H|apply BS.B2R_Babs].
Qed.

(** A quotient by a finite nonzero divisor: a finite result has a finite
    dividend. *)
Lemma Bdiv_finite : forall x y : b64,
  is_finite y = true -> B2R y <> 0 ->
  is_finite (Bdiv x y) = true ->
  is_finite x = true /\ B2R (Bdiv x y) = fl (B2R x / B2R y).
Proof.
  intros x y Hy Hy0 H.
  pose proof (BS.Bdiv_correct prec emax _ _ BS.mode_NE x y Hy0) as C.
  destruct (Rlt_bool _ _) in C.
  - destruct C as (C1 & C2 & _). rewrite C2 in H. auto.
  - apply overflow_not_finite in C. congruence.
Qed.

(** ** Whole expressions *)
Inductive expr : Type :=
  | Leaf (x : b64)
  | Add (a b : expr)
  | Sub (a b : expr)
  | Mul (a b : expr)
  | Fma (a b c : expr)
  | Sqrt (a : expr)
  | Abs (a : expr).

(** The IEEE computation (what numpy/BLAS do, one IEEE operation per node). *)
Fixpoint beval (t : expr) : b64 :=
  match t with
  | Leaf x => x
  | Add a b => Bplus (beval a) (beval b)
  | Sub a b => Bminus (beval a) (beval b)
  | Mul a b => Bmult (beval a) (beval b)
  | Fma a b c => Bfma (beval a) (beval b) (beval c)
  | Sqrt a => Bsqrt (beval a)
  | Abs a => Babs (beval a)
  end.

(** The [fl] model of the same computation (the other files' model). *)
Fixpoint reval (t : expr) : R :=
  match t with
  | Leaf x => B2R x
  | Add a b => fl (reval a + reval b)
  | Sub a b => fl (reval a - reval b)
  | Mul a b => fl (reval a * reval b)
  | Fma a b c => fl (reval a * reval b + reval c)
  | Sqrt a => fl (sqrt (reval a))
  | Abs a => Rabs (reval a)
  end.

(** Every intermediate of [t] is finite. *)
Fixpoint all_finite (t : expr) : Prop :=
  is_finite (beval t) = true /\
  match t with
  | Leaf _ => True
  | Add a b | Sub a b | Mul a b => all_finite a /\ all_finite b
  | Fma a b c => all_finite a /\ all_finite b /\ all_finite c
  | Sqrt a | Abs a => all_finite a
  end.

(** A finite IEEE result: every intermediate was finite (nothing
    overflowed) and the result is the [fl] model's value. *)
Theorem finite_expr_is_fl_model : forall t,
  is_finite (beval t) = true -> all_finite t /\ B2R (beval t) = reval t.
Proof.
  induction t as [x|a IHa b IHb|a IHa b IHb|a IHa b IHb|a IHa b IHb c IHc|a IHa|a IHa]; intros H;
    simpl in H |- *.
  - split; [split; [exact H|exact I]|reflexivity].
  - destruct (Bplus_finite _ _ H) as (Ha & Hb & E).
    destruct (IHa Ha) as [Fa Ea]. destruct (IHb Hb) as [Fb Eb].
    split; [tauto|]. rewrite E, Ea, Eb. reflexivity.
  - destruct (Bminus_finite _ _ H) as (Ha & Hb & E).
    destruct (IHa Ha) as [Fa Ea]. destruct (IHb Hb) as [Fb Eb].
    split; [tauto|]. rewrite E, Ea, Eb. reflexivity.
  - destruct (Bmult_finite _ _ H) as (Ha & Hb & E).
    destruct (IHa Ha) as [Fa Ea]. destruct (IHb Hb) as [Fb Eb].
    split; [tauto|]. rewrite E, Ea, Eb. reflexivity.
  - destruct (Bfma_finite _ _ _ H) as (Ha & Hb & Hc & E).
    destruct (IHa Ha) as [Fa Ea]. destruct (IHb Hb) as [Fb Eb]. destruct (IHc Hc) as [Fc Ec].
    split; [tauto|]. rewrite E, Ea, Eb, Ec. reflexivity.
  - destruct (Bsqrt_finite _ H) as (Ha & E). destruct (IHa Ha) as [Fa Ea].
    split; [tauto|]. rewrite E, Ea. reflexivity.
  - destruct (Babs_finite _ H) as (Ha & E). destruct (IHa Ha) as [Fa Ea].
    split; [tauto|]. rewrite E, Ea. reflexivity.
Qed.

(** Contrapositive, as the code uses it: if some intermediate is not
    finite (an overflow, or an input infinity or NaN), so is the result,
    and the code returns its trivially valid infinite bound. *)
Corollary nonfinite_propagates : forall t, ~ all_finite t -> is_finite (beval t) = false.
Proof.
  intros t H. destruct (is_finite (beval t)) eqn:E; [|reflexivity].
  exfalso. apply H, finite_expr_is_fl_model, E.
Qed.
