(** * Lemma 8.1's float finishing: column norms and their sum

    Backs [proofs/enclosure.md] §8 (Lemma 8.1, *Evaluation*: "Every [fl]
    below has relative error [<= u] and no absolute term ... *Upper:*
    [sqrt s_j <= fl(sqrt y_j)(1+2u)] ... *Lower:* [sqrt s_j >=
    fl(sqrt x_j^+)(1-2u)] ... the sums ... [sigma^-/(1+gamma_n) <= sum_j
    <= sigma^+/(1-gamma_n)]"); code: [certbound/enclose/quantities.py]
    ([_norm_21_of_product_gram_stack]: [hi = sqrt(maximum(t, 0) + e)],
    [lo = sqrt(maximum(t - e, 0))], [s_hi, s_lo = hi.sum(), lo.sum()],
    then the Arb factors of [_lemma81_sum_factors]).

    Hypotheses: for each column [j], [s_j = ||A b_j||^2 >= 0] and the floats
    [t_j], [e_j >= 0] with [|s_j - t_j| <= e_j] (Lemma 8.1 with [e_j >=
    c1 q_j + c0], [Lemma81.v], [Lemma81Float.v]).  Why no absolute
    (underflow) term: a sum or difference of floats is exact when it is
    subnormal ([FPModel.fl_add_error]); the square root of a positive float
    is [>= 2^-537], normal ([sqrt_rel]). *)

From Coq Require Import Reals Psatz List Permutation.
From Flocq Require Import Core Relative.
From Certbound Require Import FPModel Summation.
Open Scope R_scope.

(** [fl(sqrt x)] has relative error [<= u] for every float [x >= 0]. *)
Lemma sqrt_rel : forall x, format x -> 0 <= x -> Rabs (fl (sqrt x) - sqrt x) <= u * sqrt x.
Proof.
  intros x Fx Hx. destruct (Req_dec x 0) as [->|Hx0].
  - rewrite sqrt_0, fl_0, Rminus_0_r, Rabs_R0. lra.
  - assert (Hmin : bpow radix2 (-1074) <= x).
    { replace (bpow radix2 (-1074)) with (succ radix2 fexp 0).
      - apply succ_le_lt; auto with typeclass_instances; [apply format_0 | lra].
      - rewrite succ_0, ulp_FLT_0 by exact prec_gt_0. reflexivity. }
    assert (Hs : bpow radix2 (-1022) <= Rabs (sqrt x)).
    { rewrite Rabs_pos_eq by apply sqrt_pos.
      apply Rle_trans with (bpow radix2 (-537)); [apply bpow_le; lia|].
      rewrite <- (sqrt_bpow radix2 (-537)). apply sqrt_le_1_alt. exact Hmin. }
    pose proof (relative_error_N_FLT radix2 emin prec ltac:(unfold prec; lia)
                  (fun t => negb (Z.even t)) (sqrt x)) as H.
    unfold fl. eapply Rle_trans; [apply H|].
    + exact Hs.
    + rewrite u_eq, Rabs_pos_eq by apply sqrt_pos. lra.
Qed.

Lemma u_tiny : 0 < u <= / 1024.
Proof. pose proof u_pos. pose proof u_small. split; [lra|]. apply Rle_trans with (/ 2 ^ 53); [lra|].
  apply Rinv_le_contravar; [lra|]. simpl. lra. Qed.

(** Upper: [sqrt s <= fl(sqrt(fl(max(t, 0) + e))) (1 + 2u)]. *)
Theorem column_upper : forall s t e, format t -> format e -> 0 <= e -> 0 <= s -> Rabs (s - t) <= e ->
  sqrt s <= fl (sqrt (fl (Rmax t 0 + e))) * (1 + 2 * u).
Proof.
  intros s t e Ft Fe He Hs Hst. apply Rabs_le_inv in Hst. destruct u_tiny as [Hu0 Hu1].
  assert (Fm : format (Rmax t 0)) by (unfold Rmax; destruct (Rle_dec t 0); [apply format_0 | exact Ft]).
  set (z := Rmax t 0 + e). assert (Hz : s <= z) by (unfold z; pose proof (Rmax_l t 0); lra).
  assert (Hz0 : 0 <= z) by (unfold z; pose proof (Rmax_r t 0); lra).
  pose proof (fl_add_error _ _ Fm Fe) as Hy. fold z in Hy. rewrite (Rabs_pos_eq z) in Hy by exact Hz0.
  apply Rabs_le_inv in Hy. set (y := fl z) in *.
  assert (Hy0 : 0 <= y) by (apply fl_nonneg; exact Hz0).
  pose proof (sqrt_rel y (fl_format z) Hy0) as Hr. apply Rabs_le_inv in Hr.
  set (F := fl (sqrt y)) in *. pose proof (sqrt_pos y) as Hsy.
  assert (HF : (1 - u) * sqrt y <= F) by lra.
  assert (HF0 : 0 <= F) by (unfold F; apply fl_nonneg, sqrt_pos).
  (* s <= z <= y/(1-u) and y = sqrt y ^ 2 <= (F/(1-u))^2 *)
  apply Rsqr_incr_0_var; [|apply Rmult_le_pos; lra].
  rewrite Rsqr_sqrt by exact Hs. unfold Rsqr.
  assert (Hyy : sqrt y * sqrt y = y) by (apply sqrt_sqrt; exact Hy0).
  assert (Hus : 0 <= (1 - u) * (z - s)) by (apply Rmult_le_pos; lra).
  assert (Hsz : (1 - u) * s <= y) by lra.
  assert (HF1 : (1 - u) * sqrt y * ((1 - u) * sqrt y) <= F * F) by (apply Rmult_le_compat; nra).
  assert (HF2 : (1 - u) ^ 2 * y <= F * F) by (rewrite <- Hyy; nra).
  assert (Hk : 1 <= (1 + 2 * u) ^ 2 * (1 - u) ^ 3).
  { assert (0 <= u * (1 - 5 * u - u ^ 2 + 8 * u ^ 3 - 4 * u ^ 4)); [|nra].
    apply Rmult_le_pos; [lra|]. assert (u ^ 2 <= u) by nra. assert (u ^ 4 <= u) by nra. nra. }
  (* s <= y/(1-u) <= F^2/(1-u)^3 <= F^2 (1+2u)^2 *)
  assert (Hc : 0 < 1 - u) by lra.
  assert (H3 : (1 - u) ^ 3 * s <= F * F).
  { apply Rle_trans with ((1 - u) ^ 2 * y); [|exact HF2].
    replace ((1 - u) ^ 3 * s) with ((1 - u) ^ 2 * ((1 - u) * s)) by ring.
    apply Rmult_le_compat_l; [nra | exact Hsz]. }
  assert (H4 : (1 + 2 * u) ^ 2 * ((1 - u) ^ 3 * s) <= (1 + 2 * u) ^ 2 * (F * F)) by (apply Rmult_le_compat_l; nra).
  assert (H5 : s <= (1 + 2 * u) ^ 2 * (1 - u) ^ 3 * s) by nra.
  nra.
Qed.

(** Lower: [fl(sqrt(max(fl(t - e), 0))) (1 - 2u) <= sqrt s]. *)
Theorem column_lower : forall s t e, format t -> format e -> 0 <= s -> Rabs (s - t) <= e ->
  fl (sqrt (Rmax (fl (t - e)) 0)) * (1 - 2 * u) <= sqrt s.
Proof.
  intros s t e Ft Fe Hs Hst. apply Rabs_le_inv in Hst. destruct u_tiny as [Hu0 Hu1].
  set (x := fl (t - e)). unfold Rmax. destruct (Rle_dec x 0) as [Hx|Hx].
  - rewrite sqrt_0, fl_0, Rmult_0_l. apply sqrt_pos.
  - assert (Hte : 0 < t - e).
    { destruct (Rlt_le_dec 0 (t - e)) as [H|H]; [exact H|]. exfalso. apply Hx.
      unfold x. rewrite <- fl_0. apply fl_le. exact H. }
    pose proof (fl_sub_error _ _ Ft Fe) as H1. fold x in H1. rewrite (Rabs_pos_eq (t - e)) in H1 by lra.
    apply Rabs_le_inv in H1.
    assert (Hx0 : 0 <= x) by lra.
    pose proof (sqrt_rel x (fl_format _) Hx0) as Hr. apply Rabs_le_inv in Hr.
    set (L := fl (sqrt x)) in *. pose proof (sqrt_pos x) as Hsx.
    assert (HL : L <= (1 + u) * sqrt x) by lra.
    assert (HL0 : 0 <= L) by (unfold L; apply fl_nonneg, sqrt_pos).
    destruct (Rle_lt_dec (L * (1 - 2 * u)) 0) as [Hn|Hp]; [apply Rle_trans with 0; [exact Hn | apply sqrt_pos]|].
    apply Rsqr_incr_0_var; [|apply sqrt_pos].
    rewrite Rsqr_sqrt by exact Hs. unfold Rsqr.
    assert (Hxx : sqrt x * sqrt x = x) by (apply sqrt_sqrt; exact Hx0).
    assert (Hus : 0 <= (1 + u) * (s - (t - e))) by (apply Rmult_le_pos; lra).
    assert (Hxs : x <= (1 + u) * s) by lra.
    assert (HL1 : L * L <= (1 + u) * sqrt x * ((1 + u) * sqrt x)) by (apply Rmult_le_compat; lra).
    assert (HL2 : L * L <= (1 + u) ^ 2 * x) by (rewrite <- Hxx; nra).
    assert (Hk : (1 + u) ^ 3 * (1 - 2 * u) ^ 2 <= 1).
    { assert (0 <= u * (1 + 5 * u - u ^ 2 - 8 * u ^ 3 - 4 * u ^ 4)); [|nra].
      apply Rmult_le_pos; [lra|]. assert (u ^ 2 <= u) by nra. assert (u ^ 3 <= u) by nra.
      assert (u ^ 4 <= u) by nra. nra. }
    assert (H3 : L * L <= (1 + u) ^ 3 * s).
    { apply Rle_trans with ((1 + u) ^ 2 * x); [exact HL2|].
      replace ((1 + u) ^ 3 * s) with ((1 + u) ^ 2 * ((1 + u) * s)) by ring.
      apply Rmult_le_compat_l; [nra | exact Hxs]. }
    assert (H4 : (1 - 2 * u) ^ 2 * (L * L) <= (1 - 2 * u) ^ 2 * ((1 + u) ^ 3 * s)) by (apply Rmult_le_compat_l; nra).
    assert (H5 : (1 - 2 * u) ^ 2 * ((1 + u) ^ 3 * s) <= s) by nra.
    nra.
Qed.

(** The sums.  Columns as triples [(s_j, t_j, e_j)]; [hi_c], [lo_c] the
    code's per-column floats; [sigma^+ = sfl th], [sigma^- = sfl tl] any
    summation trees over them (numpy's [sum(axis=1)]), [n >= #columns - 1]. *)
Definition col_ok (c : R * R * R) : Prop :=
  match c with (s, t, e) => format t /\ format e /\ 0 <= e /\ 0 <= s /\ Rabs (s - t) <= e end.
Definition hi_c (c : R * R * R) : R := match c with (_, t, e) => fl (sqrt (fl (Rmax t 0 + e))) end.
Definition lo_c (c : R * R * R) : R := match c with (_, t, e) => fl (sqrt (Rmax (fl (t - e)) 0)) end.
Definition sqrt_s (c : R * R * R) : R := match c with (s, _, _) => sqrt s end.

Lemma lsum_map_le' : forall (f g : R * R * R -> R) l, Forall (fun c => f c <= g c) l ->
  lsum (map f l) <= lsum (map g l).
Proof. intros f g l H. induction H; simpl; lra. Qed.

Lemma lsum_map_scale' : forall (f : R * R * R -> R) k l, lsum (map (fun c => k * f c) l) = k * lsum (map f l).
Proof. intros f k l. induction l; simpl; [ring | rewrite IHl; ring]. Qed.

Theorem norm21_sum_bounds : forall (cols : list (R * R * R)) (tl th : stree) (n : nat),
  Forall col_ok cols ->
  Permutation (sleaves tl) (map lo_c cols) -> Permutation (sleaves th) (map hi_c cols) ->
  (length cols - 1 <= n)%nat -> INR n * u <= / 4 ->
  (1 - 2 * u) * (sfl tl / (1 + gamma n)) <= lsum (map sqrt_s cols) /\
  lsum (map sqrt_s cols) <= (1 + 2 * u) * (sfl th / (1 - gamma n)).
Proof.
  intros cols tl th n Hok Pl Ph Hn Hu. destruct u_tiny as [Hu0 Hu1].
  assert (Flo : Forall (fun x => format x /\ 0 <= x) (map lo_c cols)).
  { apply Forall_map. eapply Forall_impl; [|exact Hok]. intros [[s t] e] _. simpl.
    split; [apply fl_format | apply fl_nonneg, sqrt_pos]. }
  assert (Fhi : Forall (fun x => format x /\ 0 <= x) (map hi_c cols)).
  { apply Forall_map. eapply Forall_impl; [|exact Hok]. intros [[s t] e] _. simpl.
    split; [apply fl_format | apply fl_nonneg, sqrt_pos]. }
  destruct (sum_nonneg_bounds (map lo_c cols) tl n Pl Flo ltac:(rewrite map_length; exact Hn) Hu) as [Hl _].
  destruct (sum_nonneg_bounds (map hi_c cols) th n Ph Fhi ltac:(rewrite map_length; exact Hn) Hu) as [_ Hh].
  assert (Cl : lsum (map (fun c => (1 - 2 * u) * lo_c c) cols) <= lsum (map sqrt_s cols)).
  { apply lsum_map_le'. eapply Forall_impl; [|exact Hok]. intros [[s t] e] (Ft & Fe & He & Hs & Hst). simpl.
    rewrite Rmult_comm. apply column_lower; assumption. }
  assert (Ch : lsum (map sqrt_s cols) <= lsum (map (fun c => (1 + 2 * u) * hi_c c) cols)).
  { apply lsum_map_le'. eapply Forall_impl; [|exact Hok]. intros [[s t] e] (Ft & Fe & He & Hs & Hst). simpl.
    rewrite Rmult_comm. apply column_upper; assumption. }
  rewrite lsum_map_scale' in Cl, Ch. split.
  - eapply Rle_trans; [|exact Cl]. apply Rmult_le_compat_l; [lra | exact Hl].
  - eapply Rle_trans; [exact Ch|]. apply Rmult_le_compat_l; [lra | exact Hh].
Qed.
