# bash completion for hpnode. Commands, options and --output values are read
# from the installed binary's own help, section ids from `hpnode explain --list`,
# so the completion never lists an option the binary lacks.
_hpnode()
{
	local cur prev cmd words_opts prog
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	prog=${COMP_WORDS[0]}
	cmd=${COMP_WORDS[1]}

	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$("$prog" --help 2>/dev/null | awk '/^  [a-z]/ {print $1}') help --help --version" -- "$cur"))
		return
	fi
	case $cmd in
	help)
		[ "$COMP_CWORD" -eq 2 ] &&
			COMPREPLY=($(compgen -W "$("$prog" --help 2>/dev/null | awk '/^  [a-z]/ {print $1}')" -- "$cur"))
		return
		;;
	explain)
		if [[ $cur != -* ]]; then
			COMPREPLY=($(compgen -W "$("$prog" explain --list 2>/dev/null | awk '{print $1}')" -- "$cur"))
			return
		fi
		;;
	esac
	case $prev in
	--output)
		COMPREPLY=($(compgen -W "$("$prog" "$cmd" --help 2>/dev/null | sed -n 's/.*--output \([a-z|]*\).*/\1/p' | head -n1 | tr '|' ' ')" -- "$cur"))
		return
		;;
	--fail-on)
		COMPREPLY=($(compgen -W "P0 P1 P2" -- "$cur"))
		return
		;;
	--ssm-transport)
		COMPREPLY=($(compgen -W "native plugin auto" -- "$cur"))
		return
		;;
	--orchestrator)
		COMPREPLY=($(compgen -W "eks slurm" -- "$cur"))
		return
		;;
	--save-snapshot|--snapshot|--output-file|--text-file|--json-file|--junit-file|--kubeconfig)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--cluster|--region|--profile|--endpoint-url|--node|--context|--sample|--concurrency|--ssm-rate|--probe-timeout|--timeout|--sg-id|--eks-name|--namespace|--job|--sample-nodes|--since|--log-pods)
		return
		;;
	esac
	words_opts=$("$prog" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)
	COMPREPLY=($(compgen -W "$words_opts" -- "$cur"))
}
complete -F _hpnode hpnode
