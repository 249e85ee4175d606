(** * Schatten sums from the float ends (Lemma 8.2)

    Backs [proofs/enclosure.md] §8 Lemma 8.2 ([S_p], [p = a/2^j], from the
    float ends of the sigma_i, one step outward per operation; the Frobenius
    norm as [sqrt S_2]); code: [certbound/enclose/quantities.py]
    ([_directed_powers], [_schatten_float_sum], [_sqrt_interval], used by
    [schatten_quantity], [nuclear_norm], [frobenius_norm], [stable_rank],
    [norms_and_schatten_intervals]).

    The code's operation sequence ([FPModel.fl] per numpy / [math]
    operation, [np.nextafter] = Flocq's [succ]/[pred], [OneStep.v]):
    - [_step_down(x) = max(nextafter(x, -inf), 0.0)]: [dn y = Rmax (pred (fl y)) 0]
      for the exact result [y] of the operation that gave [x];
      [_step_up(x) = nextafter(x, +inf)]: [upn y = succ (fl y)];
    - [j] square roots: [lo <- dn (sqrt lo)], [hi <- upn (sqrt hi)] ([roots_lo], [roots_hi]);
    - square-and-multiply over the bits of [a] from the lowest
      ([pw_lo], [pw_hi]: Coq's [positive] is exactly that binary recursion:
      [xI p] = odd [2p+1], [xO p] = even [2p], [xH] = 1): on an odd step
      [L <- lo] the first time, else [L <- dn (L * lo)]; then, if bits
      remain, [lo <- dn (lo * lo)]; dually [H], [hi] with [upn];
    - [math.fsum] returns the float nearest to the exact sum of its floats
      (Shewchuk; an [OverflowError] sends the code to Arb): [fl (sum L)];
      [S_lo = max(nextafter(fsum(L), -inf), 0.0)],
      [S_hi = nextafter(fsum(H), +inf)] (accepted only when finite);
    - [_sqrt_interval]: [(max(nextafter(sqrt(lo), -inf), 0.0),
      nextafter(sqrt(hi), +inf) if hi > 0 else 0.0)].
    Overflow: an overflow of the upper chain gives [+inf], which stays
    [+inf] up to [S_hi] (rejected); every lower value is below the upper one
    of the same step, so an accepted [S_hi] means no step overflowed.

    [sigma^p] for [p = a/2^j] is [(sqrt^j sigma)^a] ([dyadic_power]: equal to
    [Rpower sigma (a/2^j)] for [sigma > 0], and [0^p = 0]).

    At the end: Lemma 8.3 (rational [p = a/b]): the verified candidates of
    [_verified_power_bounds] ([verified_root_lower], [verified_root_upper],
    [lemma83_term]) and the sums of [_schatten_rational_sum]
    ([float_sum_of_bounds]). *)

From Coq Require Import Reals Psatz List.
From Flocq Require Import Core.
From Certbound Require Import FPModel OneStep.
Open Scope R_scope.

Local Notation succ := (succ radix2 fexp).
Local Notation pred := (pred radix2 fexp).

Definition dn (y : R) : R := Rmax (pred (fl y)) 0.
Definition upn (y : R) : R := succ (fl y).

Lemma dn_sound : forall q y, 0 <= q -> y <= q -> 0 <= dn y <= q.
Proof.
  intros q y Hq H. unfold dn. split; [apply Rmax_r|]. apply Rmax_lub; [apply step_down|]; lra.
Qed.

Lemma upn_sound : forall q y, q <= y -> q <= upn y.
Proof. intros q y H. unfold upn. apply step_up. exact H. Qed.

(** ** Square roots. *)
Fixpoint sqrt_iter (j : nat) (x : R) : R :=
  match j with O => x | S j => sqrt (sqrt_iter j x) end.

Fixpoint roots_lo (j : nat) (x : R) : R :=
  match j with O => x | S j => dn (sqrt (roots_lo j x)) end.

Fixpoint roots_hi (j : nat) (x : R) : R :=
  match j with O => x | S j => upn (sqrt (roots_hi j x)) end.

Lemma sqrt_iter_nonneg : forall j x, 0 <= x -> 0 <= sqrt_iter j x.
Proof. induction j; simpl; intros x Hx; [exact Hx | apply sqrt_pos]. Qed.

Lemma sqrt_iter_le : forall j x y, x <= y -> sqrt_iter j x <= sqrt_iter j y.
Proof. induction j; simpl; intros x y H; [exact H | apply sqrt_le_1_alt; auto]. Qed.

Theorem roots_lo_sound : forall j l s, 0 <= l <= s -> 0 <= roots_lo j l <= sqrt_iter j s.
Proof.
  induction j; simpl; intros l s H; [exact H|].
  specialize (IHj l s H). apply dn_sound; [apply sqrt_pos | apply sqrt_le_1_alt; lra].
Qed.

Theorem roots_hi_sound : forall j s h, 0 <= s <= h -> sqrt_iter j s <= roots_hi j h.
Proof.
  induction j; simpl; intros s h H; [lra|].
  specialize (IHj s h H). apply upn_sound, sqrt_le_1_alt. exact IHj.
Qed.

Lemma roots_hi_nonneg : forall j h, 0 <= h -> 0 <= roots_hi j h.
Proof.
  intros j h Hh. pose proof (roots_hi_sound j 0 h (conj (Rle_refl 0) Hh)).
  pose proof (sqrt_iter_nonneg j 0 (Rle_refl 0)). lra.
Qed.

(** ** Square-and-multiply ([_directed_powers]' loop). *)
Definition mul_lo (L : option R) (x : R) : R := match L with None => x | Some l => dn (l * x) end.
Definition mul_hi (H : option R) (x : R) : R := match H with None => x | Some h => upn (h * x) end.

Fixpoint pw_lo (a : positive) (x : R) (L : option R) : R :=
  match a with
  | xH => mul_lo L x
  | xI p => pw_lo p (dn (x * x)) (Some (mul_lo L x))
  | xO p => pw_lo p (dn (x * x)) L
  end.

Fixpoint pw_hi (a : positive) (x : R) (H : option R) : R :=
  match a with
  | xH => mul_hi H x
  | xI p => pw_hi p (upn (x * x)) (Some (mul_hi H x))
  | xO p => pw_hi p (upn (x * x)) H
  end.

(** [L] stands for [Z] ([None]: nothing multiplied yet, [Z = 1]). *)
Definition lo_for (L : option R) (Z : R) : Prop :=
  match L with None => Z = 1 | Some l => 0 <= l <= Z end.
Definition hi_for (H : option R) (Z : R) : Prop :=
  match H with None => Z = 1 | Some h => 0 <= Z <= h end.

Lemma pow_xI : forall (X : R) p, X ^ Pos.to_nat (xI p) = X * (X * X) ^ Pos.to_nat p.
Proof. intros X p. rewrite Pos2Nat.inj_xI, <- pow_sqr. reflexivity. Qed.

Lemma pow_xO : forall (X : R) p, X ^ Pos.to_nat (xO p) = (X * X) ^ Pos.to_nat p.
Proof. intros X p. rewrite Pos2Nat.inj_xO. rewrite pow_sqr. reflexivity. Qed.

Theorem pw_lo_sound : forall a x X L Z, 0 <= x <= X -> lo_for L Z ->
  0 <= pw_lo a x L <= Z * X ^ Pos.to_nat a.
Proof.
  induction a as [p IH | p IH |]; intros x X L Z Hx HL; simpl pw_lo.
  - rewrite pow_xI.
    assert (HM : 0 <= mul_lo L x <= Z * X).
    { destruct L as [l|]; simpl in *; [apply dn_sound; [apply Rmult_le_pos|apply Rmult_le_compat]; lra|].
      subst Z. lra. }
    replace (Z * (X * (X * X) ^ Pos.to_nat p)) with ((Z * X) * (X * X) ^ Pos.to_nat p) by ring.
    apply IH; [|exact HM]. apply dn_sound; [apply Rmult_le_pos | apply Rmult_le_compat]; lra.
  - rewrite pow_xO. apply IH; [|exact HL]. apply dn_sound; [apply Rmult_le_pos | apply Rmult_le_compat]; lra.
  - rewrite Pos2Nat.inj_1, pow_1.
    destruct L as [l|]; simpl in *; [apply dn_sound; [apply Rmult_le_pos|apply Rmult_le_compat]; lra|].
    subst Z. lra.
Qed.

Theorem pw_hi_sound : forall a x X H Z, 0 <= X <= x -> hi_for H Z ->
  Z * X ^ Pos.to_nat a <= pw_hi a x H /\ 0 <= Z * X ^ Pos.to_nat a.
Proof.
  induction a as [p IH | p IH |]; intros x X H Z Hx HH; simpl pw_hi.
  - rewrite pow_xI.
    assert (HM : 0 <= Z * X <= mul_hi H x).
    { destruct H as [h|]; simpl in *.
      - split; [apply Rmult_le_pos; lra|]. apply upn_sound, Rmult_le_compat; lra.
      - subst Z. lra. }
    replace (Z * (X * (X * X) ^ Pos.to_nat p)) with ((Z * X) * (X * X) ^ Pos.to_nat p) by ring.
    apply IH; [|exact HM]. split; [apply Rmult_le_pos; lra|]. apply upn_sound, Rmult_le_compat; lra.
  - rewrite pow_xO. apply IH; [|exact HH]. split; [apply Rmult_le_pos; lra|].
    apply upn_sound, Rmult_le_compat; lra.
  - rewrite Pos2Nat.inj_1, pow_1.
    destruct H as [h|]; simpl in *.
    + split; [apply upn_sound, Rmult_le_compat; lra | apply Rmult_le_pos; lra].
    + subst Z. lra.
Qed.

(** One sigma: [L <= (sqrt^j l)^a <= (sqrt^j sigma)^a <= (sqrt^j h)^a <= H]. *)
Definition pow_lo (a : positive) (j : nat) (l : R) : R := pw_lo a (roots_lo j l) None.
Definition pow_hi (a : positive) (j : nat) (h : R) : R := pw_hi a (roots_hi j h) None.

Theorem directed_powers_sound : forall a j l s h, 0 <= l <= s -> s <= h ->
  0 <= pow_lo a j l <= sqrt_iter j s ^ Pos.to_nat a /\ sqrt_iter j s ^ Pos.to_nat a <= pow_hi a j h.
Proof.
  intros a j l s h Hl Hh. unfold pow_lo, pow_hi. split.
  - pose proof (roots_lo_sound j l s Hl) as Hr.
    pose proof (pw_lo_sound a (roots_lo j l) (sqrt_iter j s) None 1 Hr eq_refl). lra.
  - assert (Hr : 0 <= sqrt_iter j s <= roots_hi j h).
    { split; [apply sqrt_iter_nonneg; lra | apply roots_hi_sound; lra]. }
    pose proof (pw_hi_sound a (roots_hi j h) (sqrt_iter j s) None 1 Hr eq_refl). lra.
Qed.

(** [(sqrt^j x)^a = x^(a/2^j)] ([Rpower]) for [x > 0]; [0] for [x = 0]. *)
Lemma sqrt_iter_Rpower : forall j x, 0 < x -> sqrt_iter j x = Rpower x (/ 2 ^ j).
Proof.
  induction j; intros x Hx; simpl.
  - rewrite Rinv_1, Rpower_1 by exact Hx. reflexivity.
  - rewrite IHj by exact Hx. rewrite <- Rpower_sqrt by apply exp_pos.
    rewrite Rpower_mult. f_equal. rewrite Rinv_mult. ring.
Qed.

Theorem dyadic_power : forall (a : positive) j x, 0 < x ->
  sqrt_iter j x ^ Pos.to_nat a = Rpower x (INR (Pos.to_nat a) / 2 ^ j).
Proof.
  intros a j x Hx. rewrite sqrt_iter_Rpower by exact Hx.
  rewrite <- Rpower_pow by apply exp_pos. rewrite Rpower_mult. f_equal. unfold Rdiv. ring.
Qed.

Lemma dyadic_power_0 : forall (a : positive) j, sqrt_iter j 0 ^ Pos.to_nat a = 0.
Proof.
  intros a j. assert (H : sqrt_iter j 0 = 0) by (induction j; simpl; [reflexivity | rewrite IHj; apply sqrt_0]).
  rewrite H. apply pow_i. apply Pos2Nat.is_pos.
Qed.

(** ** The sums ([_schatten_float_sum]).  The family: triples
    [(l, sigma, h)] with [0 <= l <= sigma <= h]. *)
Definition sumR (f : R * R * R -> R) (ts : list (R * R * R)) : R :=
  fold_right (fun t acc => f t + acc) 0 ts.

Definition ends_ok (ts : list (R * R * R)) : Prop :=
  Forall (fun t => match t with (l, s, h) => 0 <= l <= s /\ s <= h end) ts.

Lemma sumR_le : forall f g ts, Forall (fun t => f t <= g t) ts -> sumR f ts <= sumR g ts.
Proof.
  intros f g ts H. induction H; simpl; [lra|]. lra.
Qed.

Definition spow (a : positive) (j : nat) (t : R * R * R) : R :=
  match t with (_, s, _) => sqrt_iter j s ^ Pos.to_nat a end.
Definition tlo (a : positive) (j : nat) (t : R * R * R) : R := match t with (l, _, _) => pow_lo a j l end.
Definition thi (a : positive) (j : nat) (t : R * R * R) : R := match t with (_, _, h) => pow_hi a j h end.

(** Lemma 8.2: [S_lo = max(pred(fsum L), 0) <= sum sigma_i^p <= succ(fsum H) = S_hi]. *)
Theorem schatten_float_sum_sound : forall a j ts, ends_ok ts ->
  0 <= dn (sumR (tlo a j) ts) <= sumR (spow a j) ts /\ sumR (spow a j) ts <= upn (sumR (thi a j) ts).
Proof.
  intros a j ts Hts.
  assert (Hlo : Forall (fun t => tlo a j t <= spow a j t) ts).
  { eapply Forall_impl; [|exact Hts]. intros [[l s] h] [H1 H2]. simpl.
    destruct (directed_powers_sound a j l s h H1 H2) as [[_ H] _]. exact H. }
  assert (Hhi : Forall (fun t => spow a j t <= thi a j t) ts).
  { eapply Forall_impl; [|exact Hts]. intros [[l s] h] [H1 H2]. simpl.
    destruct (directed_powers_sound a j l s h H1 H2) as [_ H]. exact H. }
  assert (H0 : Forall (fun t => (fun _ => 0) t <= spow a j t) ts).
  { eapply Forall_impl; [|exact Hts]. intros [[l s] h] [H1 H2]. simpl.
    apply pow_le, sqrt_iter_nonneg. lra. }
  pose proof (sumR_le _ _ _ H0) as Hs0.
  assert (E0 : sumR (fun _ => 0) ts = 0) by (clear; induction ts; simpl; [reflexivity | rewrite IHts; ring]).
  rewrite E0 in Hs0.
  split; [apply dn_sound; [exact Hs0 | apply sumR_le, Hlo] | apply upn_sound, sumR_le, Hhi].
Qed.

(** [_sqrt_interval] on [S_2] ([a = 2], [j = 0]): the Frobenius norm. *)
Theorem sqrt_interval_sound : forall lo q hi, 0 <= lo <= q -> q <= hi ->
  0 <= dn (sqrt lo) <= sqrt q /\ sqrt q <= (if Rlt_dec 0 hi then upn (sqrt hi) else 0).
Proof.
  intros lo q hi Hl Hh. split; [apply dn_sound; [apply sqrt_pos | apply sqrt_le_1_alt; lra]|].
  destruct (Rlt_dec 0 hi) as [Hp|Hn].
  - apply upn_sound, sqrt_le_1_alt. exact Hh.
  - assert (q = 0) by lra. subst q. rewrite sqrt_0. lra.
Qed.

Corollary frobenius_float_sound : forall ts, ends_ok ts ->
  let S2 := sumR (spow 2 0) ts in
  let Slo := dn (sumR (tlo 2 0) ts) in
  let Shi := upn (sumR (thi 2 0) ts) in
  0 <= dn (sqrt Slo) <= sqrt S2 /\ sqrt S2 <= (if Rlt_dec 0 Shi then upn (sqrt Shi) else 0).
Proof.
  intros ts Hts S2 Slo Shi. destruct (schatten_float_sum_sound 2 0 ts Hts) as [H1 H2].
  apply sqrt_interval_sound; assumption.
Qed.

(** [spow 2 0] is [sigma^2]: the sum is [||W||_F^2]. *)
Lemma spow_2_0 : forall l s h, spow 2 0 (l, s, h) = s ^ 2.
Proof. intros. reflexivity. Qed.

(** ** Lemma 8.3: rational [p = a/b] ([_directed_int_power],
    [_verified_power_bounds], [_schatten_rational_sum]).  [Dn_n x =
    pw_lo n x None], [Up_n x = pw_hi n x None] (the chains of Lemma 8.2 with
    [j = 0]: [_directed_int_power(x, n, up)] is the same loop).  A candidate
    [c] is kept when [Up_b(c) <= Dn_a(t)], a candidate [d] when
    [Dn_b(d) >= Up_a(t)]; nothing about the candidates ([numpy.power],
    [pred^k]/[succ^k]) is assumed.  The theorems take any [D <= Dn] (numpy's
    downward chain after an overflow gives the largest float, below the
    Flocq value) and the finite [Up] (equal to Flocq's). *)
Lemma pow_lt_mono : forall x y n, 0 <= x < y -> (0 < n)%nat -> x ^ n < y ^ n.
Proof.
  intros x y n Hxy Hn. induction n as [|n IH]; [lia|].
  destruct n as [|n]; [simpl; lra|].
  specialize (IH ltac:(lia)). change (x ^ S (S n)) with (x * x ^ S n). change (y ^ S (S n)) with (y * y ^ S n).
  apply Rmult_le_0_lt_compat; try lra. apply pow_le; lra.
Qed.

Lemma Rpower_root_pow : forall t (a b : positive), 0 < t ->
  Rpower t (INR (Pos.to_nat a) / INR (Pos.to_nat b)) ^ Pos.to_nat b = t ^ Pos.to_nat a.
Proof.
  intros t a b Ht. rewrite <- Rpower_pow by apply exp_pos. rewrite Rpower_mult.
  assert (Hb : INR (Pos.to_nat b) <> 0) by (apply not_0_INR; lia).
  replace (INR (Pos.to_nat a) / INR (Pos.to_nat b) * INR (Pos.to_nat b)) with (INR (Pos.to_nat a)) by (field; exact Hb).
  apply Rpower_pow. exact Ht.
Qed.

Theorem verified_root_lower : forall (t c D : R) (a b : positive), 0 < t -> 0 <= c ->
  D <= pw_lo a t None -> pw_hi b c None <= D ->
  c <= Rpower t (INR (Pos.to_nat a) / INR (Pos.to_nat b)).
Proof.
  intros t c D a b Ht Hc HD Hu.
  destruct (pw_lo_sound a t t None 1 ltac:(lra) eq_refl) as [_ H1].
  destruct (pw_hi_sound b c c None 1 ltac:(lra) eq_refl) as [H2 _].
  rewrite Rmult_1_l in H1, H2.
  set (r := Rpower t (INR (Pos.to_nat a) / INR (Pos.to_nat b))).
  destruct (Rle_lt_dec c r) as [H|H]; [exact H|]. exfalso.
  assert (Hr : 0 < r) by apply exp_pos.
  pose proof (pow_lt_mono r c (Pos.to_nat b) ltac:(lra) (Pos2Nat.is_pos b)) as Hlt.
  unfold r in Hlt. rewrite Rpower_root_pow in Hlt by exact Ht. lra.
Qed.

Theorem verified_root_upper : forall (t d D : R) (a b : positive), 0 < t -> 0 <= d ->
  D <= pw_lo b d None -> pw_hi a t None <= D ->
  Rpower t (INR (Pos.to_nat a) / INR (Pos.to_nat b)) <= d.
Proof.
  intros t d D a b Ht Hd HD Hu.
  destruct (pw_lo_sound b d d None 1 ltac:(lra) eq_refl) as [_ H1].
  destruct (pw_hi_sound a t t None 1 ltac:(lra) eq_refl) as [H2 _].
  rewrite Rmult_1_l in H1, H2.
  set (r := Rpower t (INR (Pos.to_nat a) / INR (Pos.to_nat b))).
  destruct (Rle_lt_dec r d) as [H|H]; [exact H|]. exfalso.
  pose proof (pow_lt_mono d r (Pos.to_nat b) ltac:(lra) (Pos2Nat.is_pos b)) as Hlt.
  unfold r in Hlt. rewrite Rpower_root_pow in Hlt by exact Ht. lra.
Qed.

(** The sums of Lemma 8.3 are those of Lemma 8.2: any floats [0 <= L_i <=
    sigma_i^p <= H_i] give [max(pred(fsum L), 0) <= sum sigma_i^p <=
    succ(fsum H)] ([L_i = 0] for [l_i = 0]; [c <= l_i^p <= sigma_i^p] by
    monotonicity of [t^p]). *)
Theorem float_sum_of_bounds : forall (Ls Ss Hs : list R),
  Forall2 (fun L S => 0 <= L <= S) Ls Ss -> Forall2 (fun S H => S <= H) Ss Hs ->
  0 <= dn (fold_right Rplus 0 Ls) <= fold_right Rplus 0 Ss /\ fold_right Rplus 0 Ss <= upn (fold_right Rplus 0 Hs).
Proof.
  intros Ls Ss Hs HL HH.
  assert (A : 0 <= fold_right Rplus 0 Ls <= fold_right Rplus 0 Ss).
  { clear HH. induction HL as [|L S Ls Ss [H0 H1] _ IH]; simpl; lra. }
  assert (B : fold_right Rplus 0 Ss <= fold_right Rplus 0 Hs).
  { clear HL A. induction HH as [|S H Ss Hs H0 _ IH]; simpl; lra. }
  split; [apply dn_sound; lra | apply upn_sound; exact B].
Qed.

(** One term of Lemma 8.3: [c] verified for the lower end [l > 0], [d] for
    the upper end [h]: [c <= sigma^p <= d] for every [sigma] in [[l, h]]. *)
Corollary lemma83_term : forall (l s h c d Dl Dh : R) (a b : positive),
  0 < l <= s -> s <= h -> 0 <= c -> 0 <= d ->
  Dl <= pw_lo a l None -> pw_hi b c None <= Dl ->
  Dh <= pw_lo b d None -> pw_hi a h None <= Dh ->
  c <= Rpower s (INR (Pos.to_nat a) / INR (Pos.to_nat b)) <= d.
Proof.
  intros l s h c d Dl Dh a b Hl Hh Hc Hd H1 H2 H3 H4.
  assert (Hp : 0 <= INR (Pos.to_nat a) / INR (Pos.to_nat b)).
  { unfold Rdiv. apply Rmult_le_pos; [apply pos_INR | left; apply Rinv_0_lt_compat, lt_0_INR; lia]. }
  split.
  - eapply Rle_trans; [apply (verified_root_lower l c Dl a b); lra|].
    apply Rle_Rpower_l; [exact Hp | lra].
  - eapply Rle_trans; [|apply (verified_root_upper h d Dh a b); lra].
    apply Rle_Rpower_l; [exact Hp | lra].
Qed.
