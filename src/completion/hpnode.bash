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
		if [[ $prev == --lang ]]; then
			COMPREPLY=($(compgen -W "en ja" -- "$cur"))
			return
		fi
		if [[ $cur != -* ]]; then
			COMPREPLY=($(compgen -W "$("$prog" explain --list 2>/dev/null | awk '{print $1}')" -- "$cur"))
			return
		fi
		;;
	diff)
		# OLD and NEW: snapshot or JSON report files.
		if [[ $cur != -* && $prev != --output && $prev != --fail-on-new ]]; then
			COMPREPLY=($(compgen -f -- "$cur"))
			return
		fi
		;;
	esac
	case $prev in
	--output)
		# The fleet report is text or JSON only.
		if [ "$cmd" = fleet ]; then
			COMPREPLY=($(compgen -W "text json" -- "$cur"))
			return
		fi
		COMPREPLY=($(compgen -W "$("$prog" "$cmd" --help 2>/dev/null | sed -n 's/.*--output \([a-z|]*\).*/\1/p' | head -n1 | tr '|' ' ')" -- "$cur"))
		return
		;;
	--fail-on|--fail-on-new)
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
	--regions)
		# A comma-separated list of region names, or every enabled region.
		COMPREPLY=($(compgen -W "all" -- "$cur"))
		return
		;;
	--save-snapshot|--snapshot|--output-file|--text-file|--json-file|--junit-file|--kubeconfig|--baseline|--state-dir)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--cluster|--region|--profile|--endpoint-url|--node|--context|--sample|--concurrency|--ssm-rate|--probe-timeout|--timeout|--sg-id|--eks-name|--namespace|--job|--sample-nodes|--since|--log-pods|--from|--until|--file-cap|--node-cap|--total-cap|--upload|--sse-kms-key-id|--parallel|--probe-share|--interval)
		return
		;;
	esac
	words_opts=$("$prog" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)
	COMPREPLY=($(compgen -W "$words_opts" -- "$cur"))
}
complete -F _hpnode hpnode
