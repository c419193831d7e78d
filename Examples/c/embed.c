/*
 * Embedding CObserverCore from C, without Swift: observers are plain C
 * structs; two threads add observers while two threads send; then one
 * observer is removed with a wait for in-flight deliveries, and everything
 * is torn down. Prints totals that `make examples` checks.
 */
#include <CObserverCore.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct counter {
	unsigned long total; /* updated with atomics: two senders */
};

static unsigned long released;

static void
release_counter(void *context)
{
	free(context);
	__atomic_fetch_add(&released, 1, __ATOMIC_RELAXED);
}

/* The send path: lock-free, may run on any thread, nests. */
static void
notify_all(oc_list_t *list, unsigned long value)
{
	oc_reader_t *reader = oc_read_begin();
	oc_view_t view = oc_list_view(list);
	uint32_t i;

	for (i = 0; i < view.count; i++) {
		struct counter *observer = oc_view_context(view, i);

		if (observer != NULL)
			__atomic_fetch_add(&observer->total, value, __ATOMIC_RELAXED);
	}
	oc_read_end(reader);
}

#define OBSERVERS_PER_ADDER 50
#define SENDS_PER_SENDER 10000

static oc_list_t *list;
static oc_handle_t handles[2][OBSERVERS_PER_ADDER];
static struct counter *counters[2][OBSERVERS_PER_ADDER];

static void *
adder(void *argument)
{
	int which = (int)(long)argument;
	int i;

	for (i = 0; i < OBSERVERS_PER_ADDER; i++) {
		struct counter *observer = calloc(1, sizeof *observer);

		if (observer == NULL || oc_list_add(list, observer, &handles[which][i]) != OC_OK) {
			fprintf(stderr, "add failed\n");
			exit(1);
		}
		counters[which][i] = observer;
	}
	return NULL;
}

static void *
sender(void *argument)
{
	int i;

	(void)argument;
	for (i = 0; i < SENDS_PER_SENDER; i++)
		notify_all(list, 1);
	return NULL;
}

int
main(void)
{
	pthread_t threads[4];
	unsigned long first_total;

	list = oc_list_create(release_counter);
	if (list == NULL)
		return 1;
	pthread_create(&threads[0], NULL, adder, (void *)0L);
	pthread_create(&threads[1], NULL, adder, (void *)1L);
	pthread_join(threads[0], NULL);
	pthread_join(threads[1], NULL);
	printf("observers: %zu\n", oc_list_count(list));

	pthread_create(&threads[2], NULL, sender, NULL);
	pthread_create(&threads[3], NULL, sender, NULL);
	pthread_join(threads[2], NULL);
	pthread_join(threads[3], NULL);
	first_total = __atomic_load_n(&counters[0][0]->total, __ATOMIC_RELAXED);
	printf("each observer received: %lu\n", first_total);

	/* Remove one and wait until no send can still be touching it. */
	if (oc_list_remove_wait(list, handles[0][0]) != OC_OK)
		return 1;
	printf("second remove: %s\n", oc_status_string(oc_list_remove(list, handles[0][0])));
	notify_all(list, 1);
	printf("observers after removal: %zu\n", oc_list_count(list));

	oc_list_destroy(list);
	if (oc_reclaim_barrier() != OC_OK)
		return 1;
	printf("released: %lu\n", __atomic_load_n(&released, __ATOMIC_RELAXED));
	printf("pending after barrier: %llu\n", (unsigned long long)oc_stats().pending_objects);
	return 0;
}
