#include "cli/completion_script.hpp"

#include <algorithm>
#include <ostream>

#include "ck/plugin.hpp"
#include "ck/support/shell_quote.hpp"
#include "cli/suggest.hpp"

namespace ckhost {
namespace {

using ck::support::shell_quote;

std::string words(const std::vector<std::string>& items) {
    std::vector<std::string> quoted;
    for (const auto& item : items) quoted.push_back(shell_quote(item));
    return join(quoted, " ");
}

// The lookup tables of the generator, as shell functions of one `case` each: the options of a
// stage (`_ckhost_stage_options STAGE`), the choices of a stage option (`_ckhost_option_choices
// STAGE.OPTION`), the options of a command (`_ckhost_options COMMAND`).
void write_lookup_functions(const std::vector<CompletionCommand>& commands,
                            const PluginRegistry& registry, std::ostream& out) {
    out << "_ckhost_print() { for _ckhost_w in \"$@\"; do printf '%s\\n' \"$_ckhost_w\"; done; }\n";
    out << "_ckhost_stage_options() {\n    case $1 in\n";
    for (const auto& e : registry.entries()) {
        if (!e.loaded || e.descriptor->option_count == 0) continue;
        std::vector<std::string> names;
        for (std::size_t i = 0; i < e.descriptor->option_count; ++i)
            names.push_back(std::string(e.descriptor->options[i].name) + "=");
        out << "        " << shell_quote(e.name) << ") _ckhost_print " << words(names) << " ;;\n";
    }
    out << "    esac\n}\n";
    out << "_ckhost_option_choices() {\n    case $1 in\n";
    for (const auto& e : registry.entries()) {
        if (!e.loaded) continue;
        for (std::size_t i = 0; i < e.descriptor->option_count; ++i) {
            const ck_option_descriptor& o = e.descriptor->options[i];
            if (!o.choices) continue;
            out << "        " << shell_quote(e.name + "." + o.name) << ") _ckhost_print "
                << words(split_list(o.choices, '|')) << " ;;\n";
        }
    }
    out << "    esac\n}\n";
    out << "_ckhost_options() {\n    case $1 in\n";
    for (const auto& c : commands)
        out << "        " << shell_quote(c.name) << ") _ckhost_print " << words(c.options)
            << " ;;\n";
    out << "    esac\n}\n";
}

// The candidate generator, in shell code that bash and zsh both run (no arrays, only
// ${var%...}-style expansions and case): `_ckhost_candidates KIND WORD ARG` prints every
// completion of WORD, whole words, one a line.
//   KIND command: the command names; options: ARG's options; pipeline: a pipeline typed so far
//   (stages by position, stage options inside brackets, their choices after '=').
// The lookup tables come first, then the generator, which names the commands, the stages a
// pipeline may start with (`readers`) and those that may follow (`later`) in place.
void write_generator(const std::vector<CompletionCommand>& commands, PluginRegistry& registry,
                     std::ostream& out) {
    registry.load_all();
    std::vector<std::string> readers, later, all_commands;
    for (const auto& e : registry.entries()) {
        if (!e.loaded) continue;
        if (e.descriptor->stages & CK_STAGE_READER) readers.push_back(e.name);
        if (e.descriptor->stages & (CK_STAGE_TRANSFORM | CK_STAGE_WRITER)) later.push_back(e.name);
    }
    for (const auto& c : commands) all_commands.push_back(c.name);
    write_lookup_functions(commands, registry, out);
    out << R"sh(_ckhost_candidates() {
    # Word splitting of $(...) below as the shells do it by default, whatever the user's IFS.
    local IFS=$' \t\n'
    _ckhost_word=$2
    case $1 in
        command) _ckhost_print )sh"
        << words(all_commands) << R"sh( ;;
        options) _ckhost_options "$3" ;;
        isa) _ckhost_print scalar avx2 avx512 ;;
        shell) _ckhost_print bash zsh ;;
        pipeline)
            case $_ckhost_word in
                *\[*)
                    _ckhost_inside=${_ckhost_word##*\[}
                    case $_ckhost_inside in *\]*) _ckhost_inside= ; _ckhost_closed=1 ;; *) _ckhost_closed= ;; esac
                    if [ -z "$_ckhost_closed" ]; then
                        _ckhost_before=${_ckhost_word%\[*}
                        _ckhost_stage=${_ckhost_before##*:}
                        _ckhost_option=${_ckhost_inside##*,}
                        _ckhost_head=${_ckhost_word%"$_ckhost_option"}
                        case $_ckhost_option in
                            *=*)
                                _ckhost_name=${_ckhost_option%%=*}
                                for _ckhost_c in $(_ckhost_option_choices "$_ckhost_stage.$_ckhost_name"); do
                                    printf '%s\n' "$_ckhost_head$_ckhost_name=$_ckhost_c"
                                done ;;
                            *)
                                for _ckhost_c in $(_ckhost_stage_options "$_ckhost_stage"); do
                                    printf '%s\n' "$_ckhost_head$_ckhost_c"
                                done ;;
                        esac
                        return
                    fi ;;
            esac
            case $_ckhost_word in
                *:*) _ckhost_head=${_ckhost_word%:*}:
                    for _ckhost_c in )sh"
        << words(later) << R"sh(; do printf '%s\n' "$_ckhost_head$_ckhost_c"; done ;;
                *) for _ckhost_c in )sh"
        << words(readers) << R"sh(; do printf '%s\n' "$_ckhost_c"; done ;;
            esac ;;
    esac
}
# The command in the words typed so far (convert when there is none), and what the word after
# `$1` (the previous word) is.
_ckhost_context() {
    case $1 in
        --pipeline|-p) echo pipeline ;;
        --isa) echo isa ;;
        --plugin-dir) echo dir ;;
        *) echo "" ;;
    esac
}
)sh";
}

void write_bash(const std::vector<CompletionCommand>& commands, PluginRegistry& registry,
                std::ostream& out) {
    out << "# bash completion for ckhost, generated by `ckhost completion bash` from its options\n"
           "# and the plugins it found. Install: source it, or put it in\n"
           "# share/bash-completion/completions/ckhost.\n";
    write_generator(commands, registry, out);
    out << R"sh(_ckhost() {
    local cur=${COMP_WORDS[COMP_CWORD]} command="" i
    # bash splits words at ':' and '=' (COMP_WORDBREAKS); the whole word is the text since the
    # last blank, less an opening quote, and the word before it is the one before that blank.
    local line=${COMP_LINE:0:COMP_POINT}
    local word=${line##*[[:space:]]}
    local before=${line%"$word"}
    word=${word#[\'\"]}
    before=${before%"${before##*[![:space:]]}"}
    local previous=${before##*[[:space:]]}
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            convert|inspect|verify|plugins|batch|completion|help) command=${COMP_WORDS[i]}; break ;;
        esac
    done
    local context kind=""
    context=$(_ckhost_context "$previous")
    case $context in
        pipeline) kind=pipeline ;;
        isa) kind=isa ;;
        dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        *)
            if [[ $command == completion ]]; then kind=shell
            elif [[ $command == help ]]; then kind=command
            elif [[ $word == -* ]]; then kind=options
            elif [[ -z $command ]] && [[ $COMP_CWORD -eq 1 ]]; then kind=command
            else COMPREPLY=($(compgen -f -- "$cur")); return
            fi ;;
    esac
    # Candidates are whole words; bash wants them from where its own word begins.
    local typed=${word%"$cur"} candidate
    COMPREPLY=()
    while IFS= read -r candidate; do
        [[ $candidate == "$word"* ]] || continue
        COMPREPLY+=("${candidate#"$typed"}")
    done < <(_ckhost_candidates "$kind" "$word" "${command:-convert}")
    [[ $kind == pipeline ]] && compopt -o nospace 2>/dev/null
    return 0
}
complete -F _ckhost ckhost
)sh";
}

void write_zsh(const std::vector<CompletionCommand>& commands, PluginRegistry& registry,
               std::ostream& out) {
    out << "#compdef ckhost\n"
           "# zsh completion for ckhost, generated by `ckhost completion zsh` from its options "
           "and\n"
           "# the plugins it found. Install: as _ckhost in a directory of $fpath\n"
           "# (share/zsh/site-functions).\n";
    write_generator(commands, registry, out);
    out << R"sh(_ckhost() {
    local word=${PREFIX} command="" i kind="" context
    word=${word#[\'\"]}
    for ((i = 2; i < CURRENT; i++)); do
        case ${words[i]} in
            convert|inspect|verify|plugins|batch|completion|help) command=${words[i]}; break ;;
        esac
    done
    context=$(_ckhost_context "${words[CURRENT-1]}")
    case $context in
        pipeline) kind=pipeline ;;
        isa) kind=isa ;;
        dir) _files -/; return ;;
        *)
            if [[ $command == completion ]]; then kind=shell
            elif [[ $command == help ]]; then kind=command
            elif [[ $word == -* ]]; then kind=options
            elif [[ -z $command && $CURRENT -eq 2 ]]; then kind=command
            else _files; return
            fi ;;
    esac
    local -a candidates
    candidates=(${(f)"$(_ckhost_candidates "$kind" "$word" "${command:-convert}")"})
    if [[ $kind == pipeline ]]; then
        # Brackets are glob characters: the candidates are added quoted, as the user must type them.
        compadd -Q -S '' -U -- ${(M)candidates:#${word}*}
    else
        compadd -- ${(M)candidates:#${word}*}
    fi
}
_ckhost "$@"
)sh";
}

}  // namespace

void write_completion(const std::string& shell, const std::vector<CompletionCommand>& commands,
                      PluginRegistry& registry, std::ostream& out) {
    if (shell == "zsh")
        write_zsh(commands, registry, out);
    else
        write_bash(commands, registry, out);
}

}  // namespace ckhost
