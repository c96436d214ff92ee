// The hf reader's general.* keys against gguf-py: every row of tests/data/hf-names/names.tsv
// (gguf-py's own Metadata code run on folder names and `_name_or_path` values) and every model
// card of cards.json gives the same keys, values and order, or fails where gguf-py fails (see
// that folder's README.md); the keys of the converter's reference files in ../shared/testdata
// follow from their folders and tensors; ckhost's conversions of the Phi-3-mini folder and of a
// checkpoint with a model card write the keys the converter does.
#include <boost/test/unit_test.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "gguf_reader.hpp"
#include "model_name.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_model_name {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using json = nlohmann::ordered_json;
using ckplugin::hf::ParameterCount;

namespace {

// The naming keys in set_gguf_meta_model's order: names.tsv's columns after the counts.
const std::vector<std::string> naming_keys = {
    "general.name",     "general.author",   "general.version",   "general.organization",
    "general.finetune", "general.basename", "general.size_label"};

struct NameRow {
    std::string folder;
    json config = json::object();
    ParameterCount count;
    std::vector<std::string> keys;  // "key=value" as gguf-py wrote them, in order
};

std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> cells;
    std::size_t start = 0;
    for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
        cells.push_back(line.substr(start, tab - start));
    cells.push_back(line.substr(start));
    return cells;
}

NameRow parse_row(const std::vector<std::string>& cells) {
    NameRow row;
    row.folder = json::parse(cells.at(0)).get<std::string>();
    if (!cells.at(1).empty()) row.config["_name_or_path"] = json::parse(cells[1]);
    row.count = {std::stoull(cells.at(2)), std::stoull(cells.at(3)), std::stoull(cells.at(4)),
                 static_cast<std::uint32_t>(std::stoul(cells.at(5)))};
    for (std::size_t i = 0; i < naming_keys.size(); ++i)
        if (!cells.at(6 + i).empty())
            row.keys.push_back(naming_keys[i] + "=" + json::parse(cells[6 + i]).get<std::string>());
    return row;
}

std::vector<NameRow> read_names_table() {
    std::ifstream in(cktest::test_data() / "hf-names" / "names.tsv");
    BOOST_TEST_REQUIRE(in.good(), "tests/data/hf-names/names.tsv cannot be read");
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> header = split_tabs(line);
    BOOST_TEST_REQUIRE(header.size() == 6 + naming_keys.size());
    BOOST_TEST_REQUIRE(std::equal(naming_keys.begin(), naming_keys.end(), header.begin() + 6));
    std::vector<NameRow> rows;
    while (std::getline(in, line))
        if (!line.empty()) rows.push_back(parse_row(split_tabs(line)));
    return rows;
}

// "key=value" for each entry, all strings (Boost.Test prints strings, not pairs).
std::vector<std::string> string_entries(const ck::Metadata& md) {
    std::vector<std::string> entries;
    for (const auto& [key, value] : md) {
        BOOST_TEST((value.type() == ck::ValueType::string), key);
        entries.push_back(key + "=" + value.str());
    }
    return entries;
}

// "key=TYPE:value" with gguf-py's type names, an array as its JSON list: the form of
// cards.json's entries, for the values the naming keys can have.
std::string typed_entry(const std::string& key, const ck::Value& value) {
    switch (value.type()) {
        case ck::ValueType::string:
            return key + "=STRING:" + value.str();
        case ck::ValueType::u32:
            return key + "=UINT32:" + std::to_string(value.raw());
        case ck::ValueType::array: {
            json items = json::array();
            for (std::uint64_t i = 0; i < value.array().size(); ++i)
                items.push_back(std::string(value.array().string_at(i)));
            return key + "=ARRAY:" + items.dump();
        }
        default:
            return key + "=" + std::string(ck::value_type_name(value.type()));
    }
}

std::vector<std::string> typed_entries(const ck::Metadata& md) {
    std::vector<std::string> entries;
    for (const auto& [key, value] : md) entries.push_back(typed_entry(key, value));
    return entries;
}

// cards.json's keys for one case, in the same form.
std::vector<std::string> expected_card_keys(const json& keys) {
    std::vector<std::string> entries;
    for (const json& k : keys) {
        const std::string type = k[1].get<std::string>();
        const std::string value = type == "STRING" ? k[2].get<std::string>() : k[2].dump();
        entries.push_back(k[0].get<std::string>() + "=" + type + ":" + value);
    }
    return entries;
}

json read_cards_table() {
    std::ifstream in(cktest::test_data() / "hf-names" / "cards.json");
    BOOST_TEST_REQUIRE(in.good(), "tests/data/hf-names/cards.json cannot be read");
    return json::parse(in);
}

ParameterCount card_count(const json& c) {
    return {c["total"].get<std::uint64_t>(), c["shared"].get<std::uint64_t>(),
            c["expert"].get<std::uint64_t>(), c["expert_count"].get<std::uint32_t>()};
}

// Makes `dir` the current directory for the object's lifetime.
class CurrentDirectory {
  public:
    explicit CurrentDirectory(const fs::path& dir) : previous_(fs::current_path()) {
        fs::current_path(dir);
    }
    ~CurrentDirectory() { fs::current_path(previous_); }
    CurrentDirectory(const CurrentDirectory&) = delete;
    CurrentDirectory& operator=(const CurrentDirectory&) = delete;

  private:
    fs::path previous_;
};

std::optional<fs::path> shared_subfolder(const char* name, const char* must_have) {
    const auto shared = cktest::shared_data();
    if (!shared || !fs::exists(*shared / name / must_have)) return std::nullopt;
    return *shared / name;
}

struct ReferenceFilesPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(
            shared_subfolder("hf-arch", "Phi-3-mini-4k-instruct.bf16.gguf").has_value() &&
            shared_subfolder("hf", "llama-bf16.bf16.gguf").has_value());
        ok.message() << "../shared/testdata/hf-arch or hf is absent: skipping the naming checks "
                        "against the converter's files";
        return ok;
    }
};

// What gguf-py's get_total_parameter_count gives for a file's tensors: an expert tensor
// ("_exps.", 3-D) counts once per expert (its ne[2] experts, ne[1] for a bias).
ParameterCount count_parameters(const std::vector<ck::TensorInfo>& tensors) {
    ParameterCount count;
    std::uint64_t experts_seen = 0, expert_tensors = 0;
    for (const ck::TensorInfo& t : tensors) {
        const std::uint64_t size = t.elements();
        count.total += size;
        if (t.name.find("_exps.") == std::string::npos || t.ne.size() < 3) {
            count.shared += size;
            continue;
        }
        const auto experts = static_cast<std::uint64_t>(
            t.name.find(".bias") != std::string::npos ? t.ne[1] : t.ne[2]);
        count.expert += size / experts;
        experts_seen += experts;
        ++expert_tensors;
    }
    count.expert_count =
        expert_tensors > 0 ? static_cast<std::uint32_t>(experts_seen / expert_tensors) : 0;
    return count;
}

json read_config(const fs::path& folder) {
    std::ifstream in(folder / "config.json");
    BOOST_TEST_REQUIRE(in.good(), (folder / "config.json").string());
    return json::parse(in);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hf_names)

// Every row of gguf-py's table: the same keys, values and order. The folders are named from
// an empty directory two levels down, as make_names.py names them, so that "." and ".." have
// no model card either.
BOOST_AUTO_TEST_CASE(names_match_gguf_py) {
    const std::vector<NameRow> rows = read_names_table();
    BOOST_TEST_REQUIRE(rows.size() >= 90u);
    cktest::TempDir root;
    fs::create_directories(root / "parent" / "cwd");
    const CurrentDirectory inside(root / "parent" / "cwd");
    for (const NameRow& row : rows) {
        BOOST_TEST_CONTEXT("folder " << row.folder << ", config " << row.config.dump() << ", total "
                                     << row.count.total) {
            ck::Metadata md;
            ckplugin::hf::add_general_naming(row.config, row.folder, row.count, md);
            BOOST_TEST(string_entries(md) == row.keys, boost::test_tools::per_element());
        }
    }
}

// A `_name_or_path` that is not text is no model id: the folder names the model. (gguf-py
// fails on a number or a list there; `null` it skips, as here.)
BOOST_AUTO_TEST_CASE(name_or_path_that_is_not_text_is_ignored) {
    for (const json& value : {json(7), json::array({"org/Name-7B"}), json(nullptr)}) {
        BOOST_TEST_CONTEXT("_name_or_path " << value.dump()) {
            ck::Metadata md;
            ckplugin::hf::add_general_naming(json{{"_name_or_path", value}}, "gemma-2-2b-it",
                                             {2614341888, 2614341888, 0, 0}, md);
            const std::vector<std::string> want = {
                "general.name=Gemma 2 2b It", "general.finetune=it", "general.basename=gemma-2",
                "general.size_label=2B"};
            BOOST_TEST(string_entries(md) == want, boost::test_tools::per_element());
        }
    }
}

// Every model card of gguf-py's table (cards/<folder>/README.md): the same keys, types,
// values and order; where gguf-py fails, a ck::Error naming the card.
BOOST_AUTO_TEST_CASE(cards_match_gguf_py) {
    const json cards = read_cards_table();
    BOOST_TEST_REQUIRE(cards.size() >= 30u);
    for (const auto& [folder_name, c] : cards.items()) {
        const fs::path folder = cktest::test_data() / "hf-names" / "cards" / folder_name;
        BOOST_TEST_CONTEXT("cards/" << folder_name) {
            BOOST_TEST_REQUIRE(fs::exists(folder / "README.md"));
            ck::Metadata md;
            if (c.contains("error")) {
                try {
                    ckplugin::hf::add_general_naming(json::object(), folder, card_count(c), md);
                    BOOST_ERROR("no error; gguf-py: " << c["error"].get<std::string>());
                } catch (const ck::Error& e) {
                    BOOST_TEST(e.file() == (folder / "README.md").string());
                    BOOST_TEST((e.kind() == ck::ErrorKind::input));
                }
                continue;
            }
            try {
                ckplugin::hf::add_general_naming(json::object(), folder, card_count(c), md);
            } catch (const ck::Error& e) {
                BOOST_ERROR("ck::Error where gguf-py writes keys: " << e.message());
                continue;
            }
            BOOST_TEST(typed_entries(md) == expected_card_keys(c["keys"]),
                       boost::test_tools::per_element());
        }
    }
}

// The messages say what is wrong and where: the key and its value, the YAML line, the byte.
BOOST_AUTO_TEST_CASE(card_errors_name_the_problem) {
    const fs::path cards = cktest::test_data() / "hf-names" / "cards";
    const auto message = [&cards](const char* folder) -> std::string {
        ck::Metadata md;
        try {
            ckplugin::hf::add_general_naming(json::object(), cards / folder, {1000, 1000, 0, 0},
                                             md);
        } catch (const ck::Error& e) {
            return e.subject() + ": " + e.message() + " @" +
                   (e.offset() ? std::to_string(*e.offset()) : "");
        }
        return "no error";
    };
    BOOST_TEST(cktest::contains(message("error-version-number"), "a number (1.0)"));
    BOOST_TEST(cktest::contains(message("error-version-number"), "key 'general.version'"));
    BOOST_TEST(cktest::contains(message("error-date"), "a date (2024-01-01)"));
    BOOST_TEST(cktest::contains(message("error-mixed-tags"), "a boolean (yes)"));
    BOOST_TEST(cktest::contains(message("error-base-model-name"), "general.base_model.0.name"));
    BOOST_TEST(cktest::contains(message("error-bad-yaml"), "at line 3"));
    BOOST_TEST(cktest::contains(message("error-two-documents"), "more than one YAML document"));
    BOOST_TEST(cktest::contains(message("error-undefined-alias"), "an alias to no anchor"));
    BOOST_TEST(cktest::contains(message("error-not-utf8"), "not UTF-8"));
    BOOST_TEST(cktest::contains(message("error-not-utf8"), "@16"));  // the byte offset
}

// The converter's own files: for each, the keys right after general.type are what its folder's
// name, config.json and tensor counts give, and no further naming key follows them.
BOOST_AUTO_TEST_CASE(reference_files_naming_keys, *utf::precondition(ReferenceFilesPresent())) {
    std::size_t checked = 0;
    for (const char* set : {"hf-arch", "hf"}) {
        const fs::path dir = *shared_subfolder(set, "");
        for (const auto& entry : fs::directory_iterator(dir)) {
            if (entry.path().extension() != ".gguf") continue;
            const std::string stem = entry.path().stem().string();  // <folder>.<outtype>
            const fs::path folder = dir / stem.substr(0, stem.rfind('.'));
            BOOST_TEST_CONTEXT(entry.path().filename().string()) {
                ck::RecordingContext context;
                ckplugin::gguf::GgufReader reader(context);
                const ck::ModelHeader file = reader.open(entry.path());
                // The keys up to general.type (Phi-3 long-context has one between).
                ck::Metadata md;
                for (const auto& [key, value] : file.metadata) {
                    md.set(key, value);
                    if (key == "general.type") break;
                }
                ckplugin::hf::add_general_naming(read_config(folder), folder,
                                                 count_parameters(file.tensors), md);
                BOOST_TEST_REQUIRE(file.metadata.size() > md.size());
                for (std::size_t i = 0; i < md.size(); ++i) {
                    BOOST_TEST(md.entries()[i].first == file.metadata.entries()[i].first);
                    BOOST_TEST(md.entries()[i].second.str() ==
                               file.metadata.entries()[i].second.str());
                }
                const std::string& next = file.metadata.entries()[md.size()].first;
                BOOST_TEST(
                    (std::find(naming_keys.begin(), naming_keys.end(), next) == naming_keys.end()),
                    next);
                ++checked;
            }
        }
    }
    BOOST_TEST(checked >= 15u);
}

// ckhost's own conversion of the folder named as on the Hub: the converter's four naming keys
// right after general.architecture and general.type. (Needs the hf reader's Phi-3 support.)
BOOST_AUTO_TEST_CASE(phi3_mini_folder_end_to_end, *utf::precondition(ReferenceFilesPresent())) {
    const fs::path dir = *shared_subfolder("hf-arch", "");
    cktest::TempDir out;
    const auto r = cktest::run_ckhost({"--pipeline", "hf:gguf", "-i",
                                       (dir / "Phi-3-mini-4k-instruct").string(), "-o",
                                       (out / "m.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader ours(context), theirs(context);
    const ck::ModelHeader got = ours.open(out / "m.gguf");
    const ck::ModelHeader want = theirs.open(dir / "Phi-3-mini-4k-instruct.bf16.gguf");
    const std::vector<std::pair<std::string, std::string>> keys = {
        {"general.architecture", "phi3"},
        {"general.type", "model"},
        {"general.name", "Phi 3 Mini 4k Instruct"},
        {"general.finetune", "4k-instruct"},
        {"general.basename", "Phi-3"},
        {"general.size_label", "mini"}};
    BOOST_TEST_REQUIRE(got.metadata.size() >= keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        BOOST_TEST(want.metadata.entries()[i].first == keys[i].first);
        BOOST_TEST(want.metadata.entries()[i].second.str() == keys[i].second);
        BOOST_TEST(got.metadata.entries()[i].first == keys[i].first);
        BOOST_TEST(got.metadata.entries()[i].second.str() == keys[i].second);
    }
}

// ../shared/testdata/hf/llama-bf16 linked file by file into dir/llama-bf16, with one of the
// cards of tests/data/hf-names as its README.md.
fs::path checkpoint_with_card(const cktest::TempDir& dir, const char* card) {
    const fs::path source = *shared_subfolder("hf", "llama-bf16") / "llama-bf16";
    const fs::path folder = dir / "llama-bf16";
    fs::create_directories(folder);
    for (const auto& entry : fs::directory_iterator(source))
        fs::create_symlink(entry.path(), folder / entry.path().filename());
    fs::copy_file(cktest::test_data() / "hf-names" / "cards" / card / "README.md",
                  folder / "README.md");
    return folder;
}

// ckhost's conversion of a checkpoint with a model card: after general.type, the keys
// gguf-py writes for that card and folder (cards.json's "llama-bf16"), then the model's own.
BOOST_AUTO_TEST_CASE(model_card_end_to_end, *utf::precondition(ReferenceFilesPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = checkpoint_with_card(dir, "llama-bf16");
    const auto r = cktest::run_ckhost(
        {"--pipeline", "hf:gguf", "-i", folder.string(), "-o", (out / "m.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader got = reader.open(out / "m.gguf");
    std::vector<std::string> naming;
    for (std::size_t i = 2; i < got.metadata.size(); ++i) {
        const auto& [key, value] = got.metadata.entries()[i];
        if (key.rfind("general.", 0) != 0) break;
        naming.push_back(typed_entry(key, value));
    }
    BOOST_TEST(got.metadata.entries()[1].first == "general.type");
    BOOST_TEST(naming == expected_card_keys(read_cards_table()["llama-bf16"]["keys"]),
               boost::test_tools::per_element());
}

// A card the converter fails on fails the conversion: exit 1, the card and the key named,
// no output left.
BOOST_AUTO_TEST_CASE(bad_model_card_fails_the_conversion,
                     *utf::precondition(ReferenceFilesPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = checkpoint_with_card(dir, "error-version-number");
    const auto r = cktest::run_ckhost(
        {"--pipeline", "hf:gguf", "-i", folder.string(), "-o", (out / "m.gguf").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(cktest::contains(r.err, (folder / "README.md").string()), r.err);
    BOOST_TEST(cktest::contains(r.err, "general.version"), r.err);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_model_name
