// orchid: the command-line interface. One file per subcommand.
#include <iostream>

#include "common.h"
#include "support/error.h"
#include "support/version.h"

int main(int argc, char** argv) {
  CLI::App app{"Orchid: a tensor program optimizer for ONNX models.\n"
               "Reads an ONNX model, compiles it into a program of CPU kernels, and runs, checks or times it."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  app.set_version_flag("--version", std::string("orchid ") + orchid::kVersion);
  int status = 0;
  orchid::cli::add_compile_command(app, status);
  orchid::cli::add_run_command(app, status);
  orchid::cli::add_check_command(app, status);
  orchid::cli::add_bench_command(app, status);
  orchid::cli::add_show_command(app, status);
  orchid::cli::add_machine_command(app, status);
  orchid::cli::add_explain_command(app, status);
  orchid::cli::add_report_command(app, status);
  // CLI11 reports a misspelt subcommand as a missing one; name it instead.
  std::string known;
  bool is_known = false;
  for (const CLI::App* sub : app.get_subcommands({})) {
    known += (known.empty() ? "" : ", ") + sub->get_name();
    is_known |= argc > 1 && sub->get_name() == argv[1];
  }
  if (argc > 1 && argv[1][0] != '-' && !is_known) {
    std::cerr << "orchid: error: unknown subcommand '" << argv[1] << "' (known: " << known << ")\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    // Bad arguments are user errors like any other: same prefix, status 2.
    std::cerr << "orchid: error: " << e.what() << "\nRun with --help for more information.\n";
    return 2;
  } catch (const orchid::Error& e) {
    std::cerr << "orchid: error: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "orchid: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "orchid: internal error: " << e.what() << "\n";
    return 3;
  }
  return status;
}
