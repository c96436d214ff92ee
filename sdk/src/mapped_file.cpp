#include "ck/mapped_file.hpp"

#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace bip = boost::interprocess;
namespace fs = std::filesystem;

namespace ck {
namespace {

// The guard's table of live mappings. The SIGBUS handler may only read it: every field it
// looks at is a lock-free atomic, and registration happens under a mutex the handler never
// takes. A slot whose mapping faulted keeps its name until the process ends, so the error can
// still name the file after the mapping is gone.
constexpr int max_guarded = 1024;
struct GuardSlot {
    std::atomic<std::uintptr_t> begin{0};
    std::atomic<std::uintptr_t> end{0};
    std::atomic<bool> faulted{false};
    std::string path;  // written under guard_mutex before `begin` is published
};
GuardSlot guard_slots[max_guarded];
std::atomic<bool> any_fault{false};
std::mutex guard_mutex;
struct sigaction previous_sigbus {};
std::uintptr_t page_size = 4096;

extern "C" void on_sigbus(int signal, siginfo_t* info, void* context) {
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (GuardSlot& slot : guard_slots) {
        const std::uintptr_t begin = slot.begin.load(std::memory_order_acquire);
        if (begin == 0 || address < begin || address >= slot.end.load(std::memory_order_acquire))
            continue;
        // The page vanished because the file shrank. A zero page in its place lets the read
        // finish; the flag makes sure its result is never committed. mmap is a plain system
        // call here, safe in a signal handler.
        void* page = reinterpret_cast<void*>(address / page_size * page_size);
        if (::mmap(page, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
            MAP_FAILED)
            break;
        slot.faulted.store(true, std::memory_order_release);
        any_fault.store(true, std::memory_order_release);
        return;
    }
    // Not one of our inputs: behave as if this handler had never been installed. Returning
    // re-runs the faulting instruction, which then reaches the previous disposition.
    if (previous_sigbus.sa_flags & SA_SIGINFO) {
        if (previous_sigbus.sa_sigaction) {
            previous_sigbus.sa_sigaction(signal, info, context);
            return;
        }
    }
    ::sigaction(SIGBUS, &previous_sigbus, nullptr);
}

void install_handler_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        page_size = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
        struct sigaction action {};
        action.sa_sigaction = on_sigbus;
        action.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGBUS, &action, &previous_sigbus);
    });
}

int guard_register(const std::byte* data, std::size_t size, const std::string& path) {
    if (size == 0) return -1;
    install_handler_once();
    std::lock_guard lock(guard_mutex);
    for (int i = 0; i < max_guarded; ++i) {
        GuardSlot& slot = guard_slots[i];
        if (slot.begin.load() != 0 || slot.faulted.load()) continue;
        slot.path = path;
        slot.end.store(reinterpret_cast<std::uintptr_t>(data) + size, std::memory_order_release);
        slot.begin.store(reinterpret_cast<std::uintptr_t>(data), std::memory_order_release);
        return i;
    }
    return -1;  // more than max_guarded inputs at once: this one is simply not guarded
}

void guard_unregister(int index) {
    if (index < 0) return;
    std::lock_guard lock(guard_mutex);
    guard_slots[index].begin.store(0, std::memory_order_release);
    guard_slots[index].end.store(0, std::memory_order_release);
}

// Dropping clean, read-only file pages is always safe: a later access faults them in again
// from the page cache (a neighbour sharing the first or last page, a metadata view).
void drop_pages(const std::byte* data, std::size_t size) noexcept {
    if (size == 0) return;
    const auto begin = reinterpret_cast<std::uintptr_t>(data) / page_size * page_size;
    const auto end = reinterpret_cast<std::uintptr_t>(data + size);
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// The kernel maps a read fault's neighbours with it: a window of fault_around_bytes (64 KiB by
// default), and whole large folios of the page cache (up to a PMD, 2 MiB, on file systems that
// use them, ext4 since Linux 6.x): pages of the tensors before and after a view included.
constexpr std::uintptr_t fault_around_window = 2 * 1024 * 1024;

// Drops a view's pages from this process when its last copy goes: the pages of every fault
// window the view touches, so that the neighbours the kernel mapped with its faults go too.
// Without that, a reader handing out many small views (the experts of a Mixture-of-Experts
// checkpoint, stacked from 1,152 tensors of 1.5 MiB) kept parts of each neighbour resident:
// 150 MiB for a Qwen3-MoE conversion. Pages of a neighbour still being read fault in again.
struct ViewPages {
    std::shared_ptr<const MappedFile> file;
    const std::byte* data;
    std::size_t size;
    ~ViewPages() {
        if (size == 0) return;
        const auto low = reinterpret_cast<std::uintptr_t>(file->data());
        const auto high = low + file->size();
        const auto begin = std::max(low, reinterpret_cast<std::uintptr_t>(data) /
                                             fault_around_window * fault_around_window);
        const auto end = std::min(
            high, (reinterpret_cast<std::uintptr_t>(data + size) + fault_around_window - 1) /
                      fault_around_window * fault_around_window);
        drop_pages(reinterpret_cast<const std::byte*>(begin), end - begin);
    }
};

}  // namespace

struct MappedFile::Region {
    bip::file_mapping file;
    bip::mapped_region region;
};

MappedFile::MappedFile() = default;

MappedFile::~MappedFile() {
    guard_unregister(guard_slot_);
}

std::shared_ptr<const MappedFile> MappedFile::open(const fs::path& path) {
    std::shared_ptr<MappedFile> mapped(new MappedFile);
    mapped->path_ = path.string();
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) throw Error("cannot open: " + ec.message(), mapped->path_);
    if (size > 0) {
        mapped->region_ = std::make_unique<Region>();
        try {
            mapped->region_->file = bip::file_mapping(mapped->path_.c_str(), bip::read_only);
            mapped->region_->region = bip::mapped_region(mapped->region_->file, bip::read_only);
        } catch (const bip::interprocess_exception& e) {
            throw Error(std::string("cannot map the file: ") + e.what(), mapped->path_);
        }
        mapped->data_ = static_cast<const std::byte*>(mapped->region_->region.get_address());
        mapped->size_ = mapped->region_->region.get_size();
        mapped->guard_slot_ = guard_register(mapped->data_, mapped->size_, mapped->path_);
    }
    return mapped;
}

TensorView MappedFile::view(std::uint64_t offset, std::uint64_t size) const {
    if (offset > size_ || size > size_ - offset)
        throw Error("range of " + std::to_string(size) + " bytes at " + std::to_string(offset) +
                        " is outside the file (" + std::to_string(size_) + " bytes)",
                    path_);
    const std::byte* at = data_ + offset;
    auto owner = std::shared_ptr<const ViewPages>(
        new ViewPages{shared_from_this(), at, static_cast<std::size_t>(size)});
    return TensorView::mapped(std::span(at, static_cast<std::size_t>(size)), std::move(owner));
}

int MappedFile::descriptor() const noexcept {
    return region_ ? region_->file.get_mapping_handle().handle : -1;
}

std::optional<FileExtent> TensorView::file_extent() const noexcept {
    if (!file_backed_ || !owner_) return std::nullopt;
    // Only MappedFile::view makes file-backed views, and their owner is its ViewPages.
    const MappedFile& file = *static_cast<const ViewPages*>(owner_.get())->file;
    return FileExtent{&file, static_cast<std::uint64_t>(bytes_.data() - file.data())};
}

void MappedFile::release(std::span<const std::byte> bytes) const noexcept {
    if (bytes.data() < data_ || bytes.data() + bytes.size() > data_ + size_) return;
    drop_pages(bytes.data(), bytes.size());
}

Error input_changed_error(const std::string& path) {
    return Error(
        "the file changed while being read (it was truncated or replaced during the "
        "conversion); nothing was written",
        path);
}

void throw_if_input_changed() {
    if (!any_fault.load(std::memory_order_acquire)) return;
    std::lock_guard lock(guard_mutex);
    for (const GuardSlot& slot : guard_slots)
        if (slot.faulted.load()) throw input_changed_error(slot.path);
    throw input_changed_error({});
}

std::optional<std::string> mapped_input_at(const void* address) {
    const auto a = reinterpret_cast<std::uintptr_t>(address);
    std::lock_guard lock(guard_mutex);
    for (const GuardSlot& slot : guard_slots) {
        const std::uintptr_t begin = slot.begin.load();
        if (begin != 0 && a >= begin && a < slot.end.load()) return slot.path;
    }
    return std::nullopt;
}

std::vector<std::string> mapped_input_paths() {
    std::vector<std::string> paths;
    std::lock_guard lock(guard_mutex);
    for (const GuardSlot& slot : guard_slots)
        if (slot.begin.load() != 0) paths.push_back(slot.path);
    return paths;
}

}  // namespace ck
