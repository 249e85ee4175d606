(** * Outward rounding of endpoints ([certbound/ball.py])

    Backs [proofs/enclosure.md] §5 and the rounding arguments of
    [certbound/ball.py] (module docstring): [_float_down], [_float_up],
    [_float_endpoint] (hence [float_lower], [float_upper]) and
    [_decimal_round] (hence [decimal_lower], [decimal_upper],
    [ball_to_json]).  These are the two places where the prose once failed:
    values beyond the float range, and values just below [2^-1022].

    Model of the Python primitives used (CPython, IEEE binary64):
    - [float(q)] of a [Fraction] is [q] rounded to nearest-even, and raises
      [OverflowError] when that rounded value is beyond the largest finite
      float [MAX = (2^53 - 1) 2^971] ([py_float]);
    - [math.nextafter(f, -inf)] of a finite float [f] is the next float
      below, [-inf] below [-MAX] ([next_down]);
    - [math.ldexp(m, e)] is [m 2^e] rounded to nearest-even, raising
      [OverflowError] beyond [MAX];
    - [decimal.Context(prec=d, rounding=ROUND_FLOOR/CEILING).plus] rounds
      its exact argument to [d] significant digits downward / upward (with
      the context's [Emin], i.e. a decimal FLT format; an [Emax] overflow
      raises, it never returns a wrong value).
    The extended result [ext] is a float or [+-inf]. *)

From Coq Require Import Reals Psatz.
From Flocq Require Import Core.
From Certbound Require Import FPModel.
Open Scope R_scope.

Definition MAX : R := F2R (Float radix2 (2 ^ 53 - 1) 971).

(** A finite binary64 value. *)
Definition finite64 (x : R) : Prop := format x /\ Rabs x <= MAX.

Inductive ext : Type := Fin (x : R) | PInf | NInf.

(** [e <= q] and [q <= e] for an extended float [e] and a real [q]. *)
Definition ext_le_R (e : ext) (q : R) : Prop :=
  match e with Fin x => x <= q | NInf => True | PInf => False end.
Definition R_le_ext (q : R) (e : ext) : Prop :=
  match e with Fin x => q <= x | PInf => True | NInf => False end.
Definition ext_neg (e : ext) : ext :=
  match e with Fin x => Fin (- x) | PInf => NInf | NInf => PInf end.

Definition py_float (q : R) : option R :=
  if Rle_dec (Rabs (fl q)) MAX then Some (fl q) else None.

Definition next_down (f : R) : ext :=
  if Req_EM_T f (- MAX) then NInf else Fin (pred radix2 fexp f).

(** [ball._float_down]. *)
Definition float_down (q : R) : ext :=
  match py_float q with
  | None => if Rlt_dec 0 q then Fin MAX else NInf
  | Some f => if Rlt_dec q f then next_down f else Fin f
  end.

(** [ball._float_up]: [-_float_down(-q) + 0.0]. *)
Definition float_up (q : R) : ext := ext_neg (float_down (- q)).

Lemma MAX_format : format MAX.
Proof.
  apply generic_format_FLT. apply FLT_spec with (f := Float radix2 (2 ^ 53 - 1) 971); [reflexivity| |].
  - cbn [Fnum]. unfold prec. change (radix2 ^ 53)%Z with 9007199254740992%Z.
    change (2 ^ 53 - 1)%Z with 9007199254740991%Z. reflexivity.
  - simpl. unfold emin. lia.
Qed.

Lemma MAX_pos : 0 < MAX.
Proof. unfold MAX, F2R. simpl Fnum. apply Rmult_lt_0_compat; [apply IZR_lt; reflexivity | apply bpow_gt_0]. Qed.

Lemma format_opp : forall x, format x -> format (- x).
Proof. intros; apply generic_format_opp; auto. Qed.

Lemma pred_lt : forall x, format x -> pred radix2 fexp x < x.
Proof.
  intros x Hx. destruct (Req_dec x 0) as [->|H].
  - rewrite pred_0, ulp_FLT_0; [pose proof (bpow_gt_0 radix2 emin); lra|].
    exact prec_gt_0.
  - apply pred_lt_id; exact H.
Qed.

(** Rounding to nearest is monotone and fixes floats, so it stays in [[-MAX, MAX]]
    for arguments in that range. *)
Lemma fl_in_range : forall q, Rabs q <= MAX -> Rabs (fl q) <= MAX.
Proof.
  intros q Hq. apply Rabs_le_inv in Hq. apply Rabs_le.
  rewrite <- (fl_exact MAX MAX_format) at 2. rewrite <- (fl_exact (- MAX)) by (apply format_opp, MAX_format).
  split; apply fl_le; lra.
Qed.

(** Soundness: [float_down q <= q]. *)
Theorem float_down_le : forall q, ext_le_R (float_down q) q.
Proof.
  intros q. unfold float_down, py_float.
  destruct (Rle_dec (Rabs (fl q)) MAX) as [Hr|Hr].
  - destruct (Rlt_dec q (fl q)) as [Hlt|Hge].
    + unfold next_down. destruct (Req_EM_T (fl q) (- MAX)); simpl; [exact I|].
      (* pred f <= q, else pred f would be a float strictly nearer to q than f *)
      destruct (Rle_lt_dec (pred radix2 fexp (fl q)) q) as [Hp|Hp]; [exact Hp|].
      exfalso. destruct (round_N_pt radix2 fexp (fun t => negb (Z.even t)) q) as [_ HN].
      pose proof (pred_lt (fl q) (fl_format q)) as Hpl.
      specialize (HN (pred radix2 fexp (fl q)) (generic_format_pred _ _ _ (fl_format q))).
      unfold fl in *. rewrite !Rabs_pos_eq in HN by lra. lra.
    + simpl. lra.
  - destruct (Rlt_dec 0 q) as [Hq|Hq]; simpl; [|exact I].
    destruct (Rle_lt_dec MAX q) as [H|H]; [exact H|].
    exfalso. apply Hr. apply fl_in_range. rewrite Rabs_pos_eq; lra.
Qed.

(** Optimality: every finite float [x <= q] is [<= float_down q]; and
    [float_down q] is a finite float or [-inf] (never [+inf]). So
    [float_down q] is the largest element of the floats and [-inf] that is
    [<= q]: outward, and by the least possible amount. *)
Theorem float_down_greatest :
  forall q, match float_down q with
            | Fin y => finite64 y /\ forall x, finite64 x -> x <= q -> x <= y
            | NInf => forall x, finite64 x -> q < x
            | PInf => False
            end.
Proof.
  intros q. pose proof (float_down_le q) as Hle. revert Hle.
  unfold float_down, py_float.
  pose proof MAX_pos as HM.
  destruct (round_N_pt radix2 fexp (fun t => negb (Z.even t)) q) as [_ HN]. fold (fl q) in HN.
  destruct (Rle_dec (Rabs (fl q)) MAX) as [Hr|Hr].
  - destruct (Rlt_dec q (fl q)) as [Hlt|Hge].
    + unfold next_down. destruct (Req_EM_T (fl q) (- MAX)) as [E|E]; simpl; intros Hle.
      * intros x [Hx Hxm]. apply Rabs_le_inv in Hxm. lra.
      * split; [split|].
        -- apply generic_format_pred; [auto with typeclass_instances | apply fl_format].
        -- apply Rabs_le. pose proof (pred_lt (fl q) (fl_format q)). apply Rabs_le_inv in Hr.
           split; [|lra]. apply pred_ge_gt; [auto with typeclass_instances | apply format_opp, MAX_format | apply fl_format|lra].
        -- intros x [Hx _] Hxq. apply pred_ge_gt; [auto with typeclass_instances | exact Hx | apply fl_format | lra].
    + simpl; intros _. split; [split; [apply fl_format | exact Hr]|].
      intros x [Hx _] Hxq. destruct (Rle_lt_dec x (fl q)) as [H|H]; [exact H|].
      exfalso. specialize (HN x Hx). rewrite !Rabs_left1 in HN by lra. lra.
  - destruct (Rlt_dec 0 q) as [Hq|Hq]; simpl; intros Hle.
    + split; [split; [apply MAX_format | rewrite Rabs_pos_eq; lra]|].
      intros x [_ Hx] _. apply Rabs_le_inv in Hx. lra.
    + intros x [_ Hx]. apply Rabs_le_inv in Hx.
      destruct (Rlt_le_dec q (- MAX)) as [H|H]; [lra|].
      exfalso. apply Hr. apply fl_in_range. apply Rabs_le. lra.
Qed.

(** [float_up]: sound ([q <= float_up q]) and the least float or [+inf] above [q]. *)
Theorem float_up_ge : forall q, R_le_ext q (float_up q).
Proof.
  intros q. unfold float_up. pose proof (float_down_le (- q)) as H.
  destruct (float_down (- q)); simpl in *; auto; lra.
Qed.

Theorem float_up_least :
  forall q, match float_up q with
            | Fin y => finite64 y /\ forall x, finite64 x -> q <= x -> y <= x
            | PInf => forall x, finite64 x -> x < q
            | NInf => False
            end.
Proof.
  intros q. unfold float_up. pose proof (float_down_greatest (- q)) as H.
  destruct (float_down (- q)) as [y| |]; simpl in *; auto.
  - destruct H as [[Hy Hym] Hmax]. split.
    + split; [apply format_opp; exact Hy | rewrite Rabs_Ropp; exact Hym].
    + intros x [Hx Hxm] Hqx. assert (- x <= y).
      { apply Hmax; [split; [apply format_opp; exact Hx | rewrite Rabs_Ropp; exact Hxm] | lra]. }
      lra.
  - intros x [Hx Hxm]. assert (- q < - x) by (apply H; split; [apply format_opp; exact Hx | rewrite Rabs_Ropp; exact Hxm]).
    lra.
Qed.

(** ** The fast path of [_float_endpoint].
    Arb's endpoint at 53 bits is an exact dyadic [m 2^e] with [|m| < 2^53]
    lying outside the ball (below its lower end for [lower], F6 of
    [enclosure.md] §9: a hypothesis here).  [math.ldexp(m, e)] rounds to
    nearest; the code accepts its result only if [m = 0] or the result has
    magnitude [> 2^-1022].  Then the result is exact, so it is the endpoint
    itself. (At exactly [2^-1022] it need not be: [2^-1022 - 2^-1075] has a
    53-bit significand and rounds up to [2^-1022].) *)
Theorem ldexp_exact_above_normal :
  forall m e : Z, (Z.abs m < 2 ^ 53)%Z ->
  bpow radix2 (-1022) < Rabs (fl (F2R (Float radix2 m e))) ->
  fl (F2R (Float radix2 m e)) = F2R (Float radix2 m e).
Proof.
  intros m e Hm Hbig. set (d := F2R (Float radix2 m e)) in *.
  assert (Hd : bpow radix2 (-1022) <= Rabs d).
  { destruct (Rle_lt_dec (bpow radix2 (-1022)) (Rabs d)) as [H|H]; [exact H|].
    exfalso. assert (Hn : format (bpow radix2 (-1022))).
    { apply generic_format_bpow. unfold FLT_exp, prec, emin. simpl. lia. }
    apply Rabs_lt_inv in H.
    assert (fl d <= bpow radix2 (-1022)) by (rewrite <- (fl_exact _ Hn); apply fl_le; lra).
    assert (- bpow radix2 (-1022) <= fl d) by (rewrite <- (fl_exact _ (format_opp _ Hn)); apply fl_le; lra).
    assert (Rabs (fl d) <= bpow radix2 (-1022)) by (apply Rabs_le; lra). lra. }
  apply fl_exact. unfold d. apply generic_format_F2R. intros Hm0.
  unfold cexp, FLT_exp, prec, emin.
  assert (Hd0 : d <> 0).
  { intros E. rewrite E, Rabs_R0 in Hd. pose proof (bpow_gt_0 radix2 (-1022)). lra. }
  assert (Hup : (mag radix2 d <= e + 53)%Z).
  { apply mag_le_bpow; [exact Hd0|]. unfold d. rewrite <- F2R_Zabs. unfold F2R; simpl.
    rewrite bpow_plus, Rmult_comm. apply Rmult_lt_compat_l; [apply bpow_gt_0|].
    rewrite <- IZR_Zpower by lia. apply IZR_lt. exact Hm. }
  assert (Hlo : (-1021 <= mag radix2 d)%Z).
  { apply mag_ge_bpow. exact Hd. }
  fold d. lia.
Qed.

(** [_float_endpoint(x, upper=False)] given the exact lower endpoint [lo]
    of the ball and Arb's 53-bit endpoint [m 2^e <= lo]. *)
Definition float_lower_endpoint (lo : R) (m e : Z) : ext :=
  let d := F2R (Float radix2 m e) in
  if Rle_dec (Rabs (fl d)) MAX then
    if orb (Z.eqb m 0) (if Rlt_dec (bpow radix2 (-1022)) (Rabs (fl d)) then true else false)
    then Fin (fl d) else float_down lo
  else if Z.ltb m 0 then NInf else float_down lo.

(** [_float_endpoint(x, upper=True)] given the exact upper endpoint [hi]
    and Arb's 53-bit endpoint [m 2^e >= hi]. *)
Definition float_upper_endpoint (hi : R) (m e : Z) : ext :=
  let d := F2R (Float radix2 m e) in
  if Rle_dec (Rabs (fl d)) MAX then
    if orb (Z.eqb m 0) (if Rlt_dec (bpow radix2 (-1022)) (Rabs (fl d)) then true else false)
    then Fin (fl d) else float_up hi
  else if Z.ltb 0 m then PInf else float_up hi.

Lemma endpoint_exact :
  forall m e, (Z.abs m < 2 ^ 53)%Z ->
  orb (Z.eqb m 0) (if Rlt_dec (bpow radix2 (-1022)) (Rabs (fl (F2R (Float radix2 m e)))) then true else false) = true ->
  fl (F2R (Float radix2 m e)) = F2R (Float radix2 m e).
Proof.
  intros m e Hm H. apply Bool.orb_true_iff in H as [H|H].
  - apply Z.eqb_eq in H. subst m. rewrite F2R_0. apply fl_0.
  - destruct (Rlt_dec _ _) as [Hl|_]; [|discriminate]. apply ldexp_exact_above_normal; assumption.
Qed.

(** [float_lower]: a float [<= lo] (or [-inf]), for every ball, subnormal
    and overflowing endpoints included. *)
Theorem float_lower_sound :
  forall lo m e, (Z.abs m < 2 ^ 53)%Z -> F2R (Float radix2 m e) <= lo ->
  ext_le_R (float_lower_endpoint lo m e) lo.
Proof.
  intros lo m e Hm Hd. unfold float_lower_endpoint.
  destruct (Rle_dec _ _).
  - destruct (orb _ _) eqn:E.
    + simpl. rewrite endpoint_exact by assumption. exact Hd.
    + apply float_down_le.
  - destruct (Z.ltb m 0); [exact I | apply float_down_le].
Qed.

(** [float_upper]: a float [>= hi] (or [+inf]). *)
Theorem float_upper_sound :
  forall hi m e, (Z.abs m < 2 ^ 53)%Z -> hi <= F2R (Float radix2 m e) ->
  R_le_ext hi (float_upper_endpoint hi m e).
Proof.
  intros hi m e Hm Hd. unfold float_upper_endpoint.
  destruct (Rle_dec _ _).
  - destruct (orb _ _) eqn:E.
    + simpl. rewrite endpoint_exact by assumption. exact Hd.
    + apply float_up_ge.
  - destruct (Z.ltb 0 m); [exact I | apply float_up_ge].
Qed.

(** ** Decimal strings ([ball._decimal_round]): a [d]-digit decimal rounded
    toward [-inf] ([ROUND_FLOOR], [decimal_lower]) is [<=] the exact dyadic
    endpoint and is the largest such decimal; toward [+inf]
    ([ROUND_CEILING], [decimal_upper]) it is [>=] and the least.  [emin10]
    is the context's smallest exponent [Etiny = Emin - d + 1]. *)
Definition radix10 : radix := Build_radix 10 eq_refl.

Section Decimal.
Variable digits emin10 : Z.
Hypothesis Hdigits : (0 < digits)%Z.
Let fexp10 := FLT_exp emin10 digits.
Let Hprec : Prec_gt_0 digits := Hdigits.
#[local] Existing Instance Hprec.

Theorem decimal_floor_spec :
  forall q, let r := round radix10 fexp10 Zfloor q in
  generic_format radix10 fexp10 r /\ r <= q /\
  forall x, generic_format radix10 fexp10 x -> x <= q -> x <= r.
Proof.
  intros q r. destruct (round_DN_pt radix10 fexp10 q) as (H1 & H2 & H3). auto.
Qed.

Theorem decimal_ceiling_spec :
  forall q, let r := round radix10 fexp10 Zceil q in
  generic_format radix10 fexp10 r /\ q <= r /\
  forall x, generic_format radix10 fexp10 x -> q <= x -> r <= x.
Proof.
  intros q r. destruct (round_UP_pt radix10 fexp10 q) as (H1 & H2 & H3). auto.
Qed.
End Decimal.
