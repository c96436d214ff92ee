// ckhost: the command line (cli.md). A thin driver: the commands are in commands/, the table
// that names them and the parsing they share in cli/, and the work in pipeline/, batch/,
// inspect/ and registry/.
#include <exception>

#include "ck/error.hpp"
#include "cli/dispatch.hpp"
#include "cli/process.hpp"

int main(int argc, char** argv) {
    ckhost::cli::prepare_process();
    const bool as_json = ckhost::cli::json_requested(argc, argv);
    try {
        return ckhost::cli::dispatch(argc, argv);
    } catch (const ck::Error& e) {
        return ckhost::cli::report_error(e, as_json);
    } catch (const std::exception& e) {
        return ckhost::cli::report_error(ck::Error(e.what()), as_json);
    }
}
