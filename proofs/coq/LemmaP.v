(** * Lemma P (products without forming them): the identity, the residual bound and its float evaluation

    Backs [proofs/enclosure.md] §6 (Lemma P's proof: the identity
    [W - Q_A C Q_B^T = Q_A R_A E_B^T + E_A B^T] and
    [||W - Q_A C Q_B^T||_2 <= ||Q_A R_A||_2 ||E_B||_2 + ||E_A||_2 ||B||_2];
    *Evaluation*: [||Q_A R_A|| <= ||A|| + ||E_A||], the rounding of the core
    [fl(R_A R_B^T)]) and §11 (Lemma P-G is Lemma P with [E_A = E_B = 0]);
    code: [certbound/enclose/product.py] ([_certify_stack]: [eA], [eB],
    [normB], [normQARA], [eps], [dC]; [_certify_stack_gram]: [dC]).

    The singular-value steps of Lemma P (Ostrowski-type bounds F3/M5 for
    [Q_A C Q_B^T], Weyl F1) are [TheoremR.v]'s named hypotheses
    ([TheoremR.theorem_r] with [s := sigma(C)]); the rank statement
    ([sigma_i(W) = 0] for [i > min(d_A, d_B)]) stays prose. *)

From Coq Require Import Reals Psatz List Permutation.
From Flocq Require Import Core.
From Certbound Require Import FPModel Summation DotProduct NormBounds OneStep Lemma112.
Open Scope R_scope.

Local Notation succ := (succ radix2 fexp).
Local Notation pred := (pred radix2 fexp).

Lemma mmul_add_l : forall k (X Y C : nat -> nat -> R) i j,
  mmul k (fun a b => X a b + Y a b) C i j = mmul k X C i j + mmul k Y C i j.
Proof. intros. unfold mmul. rewrite <- rsum_add. apply rsum_ext. intros; ring. Qed.

Lemma mmul_add_r : forall k (A X Y : nat -> nat -> R) i j,
  mmul k A (fun a b => X a b + Y a b) i j = mmul k A X i j + mmul k A Y i j.
Proof. intros. unfold mmul. rewrite <- rsum_add. apply rsum_ext. intros; ring. Qed.

Lemma mtr_mmul : forall k (X Y : nat -> nat -> R) i j, mtr (mmul k X Y) i j = mmul k (mtr Y) (mtr X) i j.
Proof. intros. unfold mtr, mmul. apply rsum_ext. intros; ring. Qed.

(** The identity of Lemma P's proof: with [E_A = A - Q_A R_A],
    [E_B = B - Q_B R_B] (exactly) and [C = R_A R_B^T],
    [A B^T - Q_A C Q_B^T = Q_A R_A E_B^T + E_A B^T]. *)
Theorem lemma_p_identity : forall d dA dB (A B QA RA QB RB : nat -> nat -> R) i j,
  let EA := fun a b => A a b - mmul dA QA RA a b in
  let EB := fun a b => B a b - mmul dB QB RB a b in
  mmul d A (mtr B) i j - mmul dB (mmul dA QA (mmul d RA (mtr RB))) (mtr QB) i j
    = mmul d (mmul dA QA RA) (mtr EB) i j + mmul d EA (mtr B) i j.
Proof.
  intros d dA dB A B QA RA QB RB i j EA EB.
  (* Q_A C Q_B^T = (Q_A R_A)(Q_B R_B)^T *)
  assert (E1 : mmul dB (mmul dA QA (mmul d RA (mtr RB))) (mtr QB) i j
               = mmul d (mmul dA QA RA) (mtr (mmul dB QB RB)) i j).
  { rewrite mmul_assoc.
    transitivity (mmul dA QA (mmul d RA (mmul dB (mtr RB) (mtr QB))) i j).
    - apply mmul_ext_r. intros l _. apply mmul_assoc.
    - rewrite <- mmul_assoc. apply mmul_ext_r. intros l _. symmetry. apply mtr_mmul. }
  rewrite E1.
  assert (E2 : mmul d A (mtr B) i j = mmul d (fun a b => mmul dA QA RA a b + EA a b) (mtr B) i j).
  { apply mmul_ext_l. intros l _. unfold EA. ring. }
  rewrite E2, mmul_add_l.
  assert (E3 : mmul d (mmul dA QA RA) (mtr B) i j
               = mmul d (mmul dA QA RA) (fun a b => mtr (mmul dB QB RB) a b + mtr EB a b) i j).
  { apply mmul_ext_r. intros l _. unfold mtr, EB. ring. }
  rewrite E3, mmul_add_r. ring.
Qed.

(** The residual bound: [||W - Q_A C Q_B^T||_2 <= x y + z w] for
    [||Q_A R_A|| <= x], [||E_B|| <= y], [||E_A|| <= z], [||B|| <= w]. *)
Theorem lemma_p_residual : forall m n d dA dB (A B QA RA QB RB : nat -> nat -> R) x y z w,
  opbound m d (mmul dA QA RA) x ->
  opbound n d (fun a b => B a b - mmul dB QB RB a b) y ->
  opbound m d (fun a b => A a b - mmul dA QA RA a b) z ->
  opbound n d B w ->
  opbound m n (fun i j => mmul d A (mtr B) i j - mmul dB (mmul dA QA (mmul d RA (mtr RB))) (mtr QB) i j)
    (x * y + z * w).
Proof.
  intros m n d dA dB A B QA RA QB RB x y z w Hx Hy Hz Hw.
  apply (opbound_ext m n (fun i j => mmul d (mmul dA QA RA) (mtr (fun a b => B a b - mmul dB QB RB a b)) i j
                                   + mmul d (fun a b => A a b - mmul dA QA RA a b) (mtr B) i j)).
  - intros i j _ _. symmetry. apply lemma_p_identity.
  - apply opbound_add; apply opbound_mul; try assumption; apply opbound_transpose; assumption.
Qed.

(** [_certify_stack]'s float evaluation, the exact factors [A], [B] being
    the scaled ones ([2^k] times the stored factor) and [S_A], [S_B] the
    computed [fl(2^k F)] ([||S - F|| <= sa] with [sa = 0] where the scaling
    was exact, else [sub_a = float_upper(sqrt(m d) 2^-1075)], §5):
    from [||S_A - Q_A R_A|| <= rA] (Lemma 3.2), [||S_A|| <= nA],
    [||S_B|| <= nB] (Lemma 2.3),
    [eA = up(rA + sa')], [eB = up(rB + sb')], [normB = up(nB + sb')],
    [normQARA = up(nA + eA)], [eps = up(up(normQARA eB) + up(eA normB))]
    bounds [||W - Q_A C Q_B^T||_2] (floats [sa' >= sa], [sb' >= sb]). *)
Theorem lemma_p_eps_float : forall m n d dA dB (A B SA SB QA RA QB RB : nat -> nat -> R) sa sb sa' sb' rA rB nA nB,
  opbound m d (fun a b => SA a b - A a b) sa -> opbound n d (fun a b => SB a b - B a b) sb ->
  sa <= sa' -> sb <= sb' ->
  opbound m d (fun a b => SA a b - mmul dA QA RA a b) rA ->
  opbound n d (fun a b => SB a b - mmul dB QB RB a b) rB ->
  opbound m d SA nA -> opbound n d SB nB ->
  let eA := succ (fl (rA + sa')) in
  let eB := succ (fl (rB + sb')) in
  let normB := succ (fl (nB + sb')) in
  let normQARA := succ (fl (nA + eA)) in
  opbound m n (fun i j => mmul d A (mtr B) i j - mmul dB (mmul dA QA (mmul d RA (mtr RB))) (mtr QB) i j)
    (succ (fl (succ (fl (normQARA * eB)) + succ (fl (eA * normB))))).
Proof.
  intros m n d dA dB A B SA SB QA RA QB RB sa sb sa' sb' rA rB nA nB Hsa Hsb Ha' Hb' HrA HrB HnA HnB
    eA eB normB normQARA.
  assert (HsaP : 0 <= sa) by (destruct Hsa; assumption). assert (HsbP : 0 <= sb) by (destruct Hsb; assumption).
  assert (HrAP : 0 <= rA) by (destruct HrA; assumption). assert (HrBP : 0 <= rB) by (destruct HrB; assumption).
  assert (HnAP : 0 <= nA) by (destruct HnA; assumption). assert (HnBP : 0 <= nB) by (destruct HnB; assumption).
  assert (HeA : rA + sa <= eA) by (apply step_up; lra).
  assert (HeB : rB + sb <= eB) by (apply step_up; lra).
  assert (HnB' : nB + sb <= normB) by (apply step_up; lra).
  assert (HnQ : nA + rA <= normQARA) by (apply step_up; lra).
  (* ||E_A|| <= rA + sa: E_A = (S_A - Q_A R_A) - (S_A - A) *)
  assert (HEA : opbound m d (fun a b => A a b - mmul dA QA RA a b) (rA + sa)).
  { apply (opbound_ext m d (fun a b => (SA a b - mmul dA QA RA a b) + (-1) * (SA a b - A a b))); [intros; ring|].
    apply opbound_add; [exact HrA|].
    replace sa with (Rabs (-1) * sa) by (rewrite Rabs_left by lra; ring). apply opbound_scal, Hsa. }
  assert (HEB : opbound n d (fun a b => B a b - mmul dB QB RB a b) (rB + sb)).
  { apply (opbound_ext n d (fun a b => (SB a b - mmul dB QB RB a b) + (-1) * (SB a b - B a b))); [intros; ring|].
    apply opbound_add; [exact HrB|].
    replace sb with (Rabs (-1) * sb) by (rewrite Rabs_left by lra; ring). apply opbound_scal, Hsb. }
  (* ||B|| <= nB + sb, ||Q_A R_A|| <= nA + rA *)
  assert (HB : opbound n d B (nB + sb)).
  { apply (opbound_ext n d (fun a b => SB a b + (-1) * (SB a b - B a b))); [intros; ring|].
    apply opbound_add; [exact HnB|].
    replace sb with (Rabs (-1) * sb) by (rewrite Rabs_left by lra; ring). apply opbound_scal, Hsb. }
  assert (HQR : opbound m d (mmul dA QA RA) (nA + rA)).
  { apply (opbound_ext m d (fun a b => SA a b + (-1) * (SA a b - mmul dA QA RA a b))); [intros; ring|].
    apply opbound_add; [exact HnA|].
    replace rA with (Rabs (-1) * rA) by (rewrite Rabs_left by lra; ring). apply opbound_scal, HrA. }
  pose proof (lemma_p_residual m n d dA dB A B QA RA QB RB _ _ _ _ HQR HEB HEA HB) as H.
  apply (opbound_weaken _ _ _ _ _ H). apply step_up. apply Rplus_le_compat.
  - apply step_up. apply Rmult_le_compat; lra.
  - apply step_up. apply Rmult_le_compat; lra.
Qed.

(** The core's rounding ([_certify_stack], [_certify_stack_gram]):
    [C_hat = fl(R_A R_B^T)] (each entry ANY classical dot product of
    length [d]) has [||C_hat - C||_2 <= up(up(gu nN) + dc)] for floats
    [gu >= gamma_d], [nN >= || |R_A||R_B|^T ||_2]
    ([_stacked.abs_product_norm2_upper]) and [dc >= d eta sqrt(d_A d_B)]
    (the code's [float_upper(2 d eta sqrt(d_A d_B))]: a factor 2 of slack). *)
Theorem lemma_p_core_rounding : forall d dA dB (RA RB Ch : nat -> nat -> R) (tC : nat -> nat -> dtree) gu nN dc,
  INR d * u <= / 2 ->
  (forall i j, (i < dA)%nat -> (j < dB)%nat ->
     Permutation (dpairs (tC i j)) (map (fun k => (RA i k, mtr RB k j)) (seq 0 d)) /\ Ch i j = dfl (tC i j)) ->
  opbound dA dB (mmul d (mabs RA) (mtr (mabs RB))) nN ->
  gamma d <= gu -> INR d * eta * sqrt (INR dA * INR dB) <= dc ->
  opbound dA dB (fun i j => Ch i j - mmul d RA (mtr RB) i j) (succ (fl (succ (fl (gu * nN)) + dc))).
Proof.
  intros d dA dB RA RB Ch tC gu nN dc Hd HC HN Hgu Hdc.
  pose proof (gamma_nonneg d ltac:(lra)) as Hg0. pose proof eta_pos.
  assert (HN0 : 0 <= nN) by (destruct HN; assumption).
  assert (Hk : 0 <= INR d * eta) by (apply Rmult_le_pos; [apply pos_INR | lra]).
  assert (Hb : opbound dA dB (fun i j => Ch i j - mmul d RA (mtr RB) i j)
                (gamma d * nN + INR d * eta * sqrt (INR dA * INR dB))).
  { apply (opbound_mono dA dB _ (fun i j => gamma d * mmul d (mabs RA) (mtr (mabs RB)) i j + INR d * eta)).
    - intros i j Hi Hj. destruct (HC i j Hi Hj) as [Hp E]. rewrite E.
      exact (mmul_entry_error d RA (mtr RB) i j (tC i j) Hp Hd).
    - apply opbound_add; [apply opbound_scal_nonneg; assumption | apply opbound_const, Hk]. }
  apply (opbound_weaken _ _ _ _ _ Hb). apply step_up. apply Rplus_le_compat; [|exact Hdc].
  apply step_up. apply Rmult_le_compat_r; assumption.
Qed.

(** ** Lemma P-G's factor bound ([product._gram_factor_chain], Lemma 11.1's
    Evaluation): [R = L^T] with [L] a float Cholesky factor of
    [G_hat = fl(A^T A)] (any classical evaluation), [Z] the exact inverse
    of [R] ([R Z = I]: the hypothesis of [NormBounds.lemma_11_1_inverse]),
    [Q = A Z]; from [||G_hat - L L^T|| <= eRR], [||I - X L^T|| <= delta < 1]
    (Lemma 3.2), [||X|| <= xi] (Lemma 2.3), the code's
    [errG = up(up(gu nK) + und)], [rinv = up(xi / down(1 - delta))],
    [alpha = up(up(rinv rinv) up(errG + eRR))] bounds [||Q^T Q - I||_2]
    (when [down(1 - delta) > 0]; else [rinv] is infinite and the route
    fails). *)
Theorem lemma_11_1_alpha_float : forall m d (A Gh L X Z : nat -> nat -> R) (tG : nat -> nat -> dtree)
    nK gu und eRR delta xi,
  INR m * u <= / 2 ->
  (forall i j, (i < d)%nat -> (j < d)%nat ->
     Permutation (dpairs (tG i j)) (map (fun k => (A k i, A k j)) (seq 0 m)) /\ Gh i j = dfl (tG i j)) ->
  opbound d d (mmul m (mtr (mabs A)) (mabs A)) nK -> gamma m <= gu -> INR m * INR d * eta <= und ->
  (forall i j, (i < d)%nat -> (j < d)%nat -> mmul d (mtr L) Z i j = idm i j) ->
  opbound d d (fun i j => Gh i j - mmul d L (mtr L) i j) eRR ->
  opbound d d X xi -> opbound d d (fun i j => idm i j - mmul d X (mtr L) i j) delta -> delta < 1 ->
  0 < pred (fl (1 - delta)) ->
  let errG := succ (fl (succ (fl (gu * nK)) + und)) in
  let rinv := succ (fl (xi / pred (fl (1 - delta)))) in
  opbound d d (fun i j => mmul m (mtr (mmul d A Z)) (mmul d A Z) i j - idm i j)
    (succ (fl (succ (fl (rinv * rinv)) * succ (fl (errG + eRR))))).
Proof.
  intros m d A Gh L X Z tG nK gu und eRR delta xi Hm HG HnK Hgu Hund HZ HeRR HX Hdelta Hd1 Hpos errG rinv.
  assert (HerrG : opbound d d (fun i j => mmul m (mtr A) A i j - Gh i j) errG)
    by (apply (gram_error_upper m d A Gh tG); assumption).
  assert (Hxi : 0 <= xi) by (destruct HX; assumption).
  assert (HZb : opbound d d Z (xi / (1 - delta)))
    by exact (lemma_11_1_inverse d (mtr L) Z X HZ xi delta HX Hdelta Hd1).
  assert (Hdn : pred (fl (1 - delta)) <= 1 - delta) by (apply step_down, Rle_refl).
  assert (Hr : xi / (1 - delta) <= rinv) by (apply up_div; lra).
  assert (HE : opbound d d (fun i j => mmul m (mtr A) A i j - mmul d (mtr (mtr L)) (mtr L) i j) (errG + eRR)).
  { apply (opbound_ext d d (fun i j => (mmul m (mtr A) A i j - Gh i j) + (Gh i j - mmul d L (mtr L) i j)));
      [intros; unfold mmul, mtr; ring|].
    apply opbound_add; assumption. }
  pose proof (lemma_11_1_orthogonality m d A (mtr L) Z HZ _ _ HZb HE) as H.
  apply (opbound_weaken _ _ _ _ _ H).
  assert (Hz0 : 0 <= xi / (1 - delta)) by (apply div_nonneg; lra).
  assert (He0 : 0 <= errG + eRR) by (destruct HE; assumption).
  replace (xi / (1 - delta) * (errG + eRR) * (xi / (1 - delta)))
    with ((xi / (1 - delta) * (xi / (1 - delta))) * (errG + eRR)) by ring.
  apply up_mul; split; try lra.
  - apply Rmult_le_pos; lra.
  - apply up_mul; split; lra.
  - apply step_up, Rle_refl.
Qed.
