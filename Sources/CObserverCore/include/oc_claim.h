/*
 * oc_claim: a word that one thread at a time claims (ObserverSwift's
 * notification turn), and a read-section entry that claims it in the same
 * step, so that a sender which must both enter a section and claim the word
 * pays for one store-to-load barrier instead of two.
 *
 * The word is plain memory that the caller allocates and touches only
 * through these functions. 0 means unclaimed; a claimer stores any non-zero
 * value that identifies it.
 */
#ifndef OC_CLAIM_H
#define OC_CLAIM_H

#ifndef __cplusplus

/*
 * oc_claim_load: the word's current value. Relaxed: callers use it only to
 * recognise a value they stored themselves (program order) or to decide
 * whether to try a claim, which the compare-exchange then settles.
 */
static inline uintptr_t
oc_claim_load(const uintptr_t *word)
{
	return __atomic_load_n(word, __ATOMIC_RELAXED);
}

/*
 * oc_claim_try: changes the word from 0 to `claimer`; true when it did.
 * Sequentially consistent: acquire so that the claimer sees everything the
 * previous claimer did before its oc_claim_release, and a full barrier so
 * that the caller's later loads (a waiter count, a reader count) are not
 * ordered before it.
 */
static inline bool
oc_claim_try(uintptr_t *word, uintptr_t claimer)
{
	uintptr_t expected = 0;

	return __atomic_compare_exchange_n(word, &expected, claimer, false, __ATOMIC_SEQ_CST,
	    __ATOMIC_SEQ_CST);
}

/*
 * oc_claim_release: gives the word up (stores 0). Only its claimer calls it.
 * Release: everything the claimer did happens before the next claim.
 */
static inline void
oc_claim_release(uintptr_t *word)
{
	__atomic_store_n(word, (uintptr_t)0, __ATOMIC_RELEASE);
}

/*
 * oc_read_begin_claiming: enters a read section on `reader` (as
 * oc_read_begin_reader does) and tries oc_claim_try(word, claimer). Returns
 * whether the claim succeeded; either way the caller is inside the section
 * and must leave it with oc_read_end. A caller that failed to claim must not
 * wait for the word inside the section: it leaves the section first.
 *
 * On x86-64 (Concurrency Kit's CK_MD_TSO) a locked instruction is a full
 * barrier, so the claim's compare-exchange, placed between the section's
 * `active` store and its load of the global epoch, is the store-to-load
 * serialization oc__section_enter otherwise gets from its own exchange; the
 * steps are oc__section_enter's, in its order, and the epoch is loaded with
 * acquire by oc__epoch_observe (a plain `mov` on x86). Elsewhere it is
 * oc__section_enter followed by the claim. Where the reclaimer issues
 * membarrier (oc__membarrier_active) the section needs no fence of its
 * own; the compare-exchange stays, being the claim, and its barrier is then
 * simply more than the section needs.
 */
static inline bool
oc_read_begin_claiming(oc_reader_t *reader, uintptr_t *word, uintptr_t claimer)
{
#if defined(CK_MD_TSO)
	ck_epoch_record_t *record = &reader->record;

	if (record->active == 0) {
		bool claimed;

		ck_pr_store_uint(&record->active, 1);
		claimed = oc_claim_try(word, claimer);
		oc__epoch_observe(record);
		return claimed;
	}
	ck_pr_store_uint(&record->active, record->active + 1);
	return oc_claim_try(word, claimer);
#else
	oc__section_enter(&reader->record);
	return oc_claim_try(word, claimer);
#endif
}

#endif /* __cplusplus */

#endif /* OC_CLAIM_H */
