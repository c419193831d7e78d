// Embedding CObserverCore from C++: a small RAII wrapper over one list whose
// observers are std::function objects owned by the list.
#include <CObserverCore.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

class ObserverList {
public:
	using Handler = std::function<void(int)>;

	ObserverList() : list_(oc_list_create(&ObserverList::release)) {
		if (list_ == nullptr)
			throw std::bad_alloc();
	}
	~ObserverList() { oc_list_destroy(list_); }
	ObserverList(const ObserverList &) = delete;
	ObserverList &operator=(const ObserverList &) = delete;

	oc_handle_t add(Handler handler) {
		oc_handle_t handle;
		auto *box = new Handler(std::move(handler));
		oc_status_t status = oc_list_add(list_, box, &handle);
		if (status != OC_OK) {
			delete box;
			throw std::runtime_error(oc_status_string(status));
		}
		return handle;
	}

	bool remove(oc_handle_t handle) { return oc_list_remove(list_, handle) == OC_OK; }

	void send(int value) const {
		oc_reader_t *reader = oc_read_begin();
		oc_view_t view = oc_list_view(list_);
		for (uint32_t i = 0; i < view.count; i++) {
			if (void *context = oc_view_context(view, i))
				(*static_cast<Handler *>(context))(value);
		}
		oc_read_end(reader);
	}

private:
	static void release(void *context) { delete static_cast<Handler *>(context); }
	oc_list_t *list_;
};

int main() {
	std::atomic<long> total{0};
	{
		ObserverList observers;
		std::vector<oc_handle_t> handles;
		for (int i = 0; i < 10; i++)
			handles.push_back(observers.add([&total](int value) { total += value; }));
		std::thread a([&] { for (int i = 0; i < 1000; i++) observers.send(1); });
		std::thread b([&] { for (int i = 0; i < 1000; i++) observers.send(2); });
		a.join();
		b.join();
		std::printf("total: %ld\n", total.load());
		bool removed = observers.remove(handles[0]);
		bool again = observers.remove(handles[0]);
		std::printf("removed: %d, again: %d\n", removed, again);
		observers.send(100);
		std::printf("total after removal: %ld\n", total.load());
	}
	oc_reclaim_barrier();
	std::printf("pending after barrier: %llu\n", (unsigned long long)oc_stats().pending_objects);
	return 0;
}
