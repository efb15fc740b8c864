package io.rpctimer.retry;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The words of one {@code failback dead|replay|purge ...} command, read and checked: the sub-command, the target (a
 * {@code retry.id}, {@code all}, or {@code name=value} criteria of a {@link DeadLetterFilter}), and the options
 * {@code app=}, {@code page=}, {@code size=} (for {@code dead}) and {@code rate=} (for {@code replay}). Every front
 * (the QoS command, the Actuator endpoint, the console page) reads an operator's words here, so that each checks them
 * alike and names a bad one in the same words.
 *
 * <p><b>Threading:</b> immutable once read.
 *
 * @param command  {@code dead}, {@code replay} or {@code purge}
 * @param app      the application to act on, or null for every one of the framework
 * @param retryId  the bare {@code retry.id} given, or null
 * @param filter   the dead letters meant (with the {@code retry.id}, if one was given)
 * @param page     for {@code dead}, the page, 1-based
 * @param pageSize for {@code dead}, dead letters per page
 * @param perSecond for {@code replay}, the pace asked for, or 0 for the retry budget's
 */
public record DeadLetterWords(String command, String app, String retryId, DeadLetterFilter filter, int page,
                              int pageSize, double perSecond) {

    public static final int DEFAULT_PAGE_SIZE = 20;

    /** What a front does with one application's dead letters; may block on the store. */
    @FunctionalInterface
    public interface PerApplication<T> {
        T apply(RetryLifecycle lifecycle) throws RetryJournalException;
    }

    /** @return whether these words ask for one dead letter ({@code dead <retry.id>}) rather than a page */
    public boolean showsOne() {
        return retryId != null && filter.criteria().size() == 1;
    }

    /**
     * Runs these words on one application's dead letters, blocking on its store.
     *
     * @return for {@code dead}, a {@link DeadLetterPage}, or the {@code List<DeadLetterDetail>} of
     *         {@link DeadLetters#show} when {@link #showsOne()}; for {@code replay}, a {@link ReplayResult}; for
     *         {@code purge}, the number purged (a {@code Long})
     * @throws NoSuchDeadLetterException if a {@code retry.id} was given and this application has no such dead letter
     */
    public Object apply(DeadLetters dead) throws RetryJournalException {
        return switch (command) {
            case "dead" -> showsOne() ? dead.show(retryId) : dead.list(filter, page, pageSize);
            case "replay" -> perSecond > 0 ? dead.replay(filter, perSecond) : dead.replay(filter);
            default -> dead.purge(filter);
        };
    }

    /**
     * Runs {@code action} on each application {@link #app()} picks (default: each). A {@code retry.id} is an error
     * only if no application has it: each application's dead letters are its own.
     *
     * @return one result per application that answered, in order; empty when {@code lifecycles} is
     * @throws IllegalArgumentException naming {@code app}, if no lifecycle is that application
     * @throws NoSuchDeadLetterException if every application answered that it has no such dead letter
     */
    public <T> List<T> onEach(List<RetryLifecycle> lifecycles, PerApplication<T> action)
            throws RetryJournalException {
        List<T> results = new ArrayList<>();
        NoSuchDeadLetterException unknown = null;
        for (RetryLifecycle lifecycle : pick(lifecycles)) {
            try {
                results.add(action.apply(lifecycle));
            } catch (NoSuchDeadLetterException e) {
                unknown = e;
            }
        }
        if (results.isEmpty() && unknown != null) {
            throw unknown;
        }
        return results;
    }

    private List<RetryLifecycle> pick(List<RetryLifecycle> lifecycles) {
        if (app == null) {
            return lifecycles;
        }
        List<RetryLifecycle> picked = lifecycles.stream().filter(l -> l.application().equals(app)).toList();
        if (picked.isEmpty()) {
            throw new IllegalArgumentException("app: '" + app + "' (expected: one of "
                    + lifecycles.stream().map(RetryLifecycle::application).toList() + ")");
        }
        return picked;
    }

    /**
     * The HTTP status every front answers a failed dead-letter request with.
     *
     * @return 404 for a {@code retry.id} no dead letter has, 400 for a bad argument, 409 for a replay whose service has
     *         no live reference here, 503 when the store failed (nothing was changed), else 500
     */
    public static int status(Exception e) {
        if (e instanceof NoSuchDeadLetterException) {
            return 404;
        }
        if (e instanceof IllegalArgumentException) {
            return 400;
        }
        if (e instanceof IllegalStateException) {
            return 409;
        }
        return e instanceof RetryJournalException ? 503 : 500;
    }

    /** @return what every front says of a failed dead-letter request: its message, and for a store failure, so */
    public static String explain(Exception e) {
        return (e instanceof RetryJournalException ? "the store failed, nothing was changed: " : "") + e.getMessage();
    }

    /**
     * @param args the command's arguments, {@code args[0]} the sub-command
     * @throws IllegalArgumentException naming the argument and its value, if one is not understood
     */
    public static DeadLetterWords read(String... args) {
        String command = args[0];
        String app = null;
        String retryId = null;
        boolean all = false;
        Map<String, String> criteria = new LinkedHashMap<>();
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            String word = args[i] == null ? "" : args[i].trim();
            int eq = word.indexOf('=');
            if (word.equalsIgnoreCase("all")) {
                all = true;
            } else if (eq > 0) {
                String name = word.substring(0, eq).toLowerCase(Locale.ROOT);
                (option(name) ? options : criteria).put(name, word.substring(eq + 1));
            } else if (retryId == null && !word.isEmpty() && eq < 0) {
                retryId = word;
            } else {
                throw new IllegalArgumentException("argument: '" + word + "' (expected: one retry.id, 'all', or"
                        + " name=value with a name of " + String.join(", ", DeadLetterFilter.CRITERIA)
                        + ", app, page, size, rate)");
            }
        }
        app = options.remove("app");
        checkOptions(command, options);
        DeadLetterFilter filter = DeadLetterFilter.parse(criteria);
        if (retryId != null) {
            filter = filter.withRetryId(retryId);
        }
        checkTarget(command, all, filter);
        return new DeadLetterWords(command, app, retryId, filter, number(options, "page", 1, Integer.MAX_VALUE, 1),
                number(options, "size", 1, DeadLetters.MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE), rate(options));
    }

    /**
     * The words of a front that takes a change as fields (a form, a JSON body) rather than a command line.
     *
     * @param action {@code replay} or {@code purge}
     * @param target a {@code retry.id}, {@code all}, or filter words ({@code service=... older=1h}), space separated;
     *               null or blank for none (refused: a change needs a target)
     * @param rate   for a replay, replays a second, or null or blank for the retry budget's pace
     * @throws IllegalArgumentException naming the argument and its value, if one is not understood
     */
    public static DeadLetterWords change(String action, String target, String rate) {
        List<String> words = new ArrayList<>(List.of(action));
        if (target != null && !target.isBlank()) {
            words.addAll(List.of(target.trim().split("\\s+")));
        }
        if (rate != null && !rate.isBlank()) {
            words.add("rate=" + rate.trim());
        }
        return read(words.toArray(String[]::new));
    }

    private static boolean option(String name) {
        return name.equals("app") || name.equals("page") || name.equals("size") || name.equals("rate");
    }

    /** A change needs a target said out loud: {@code all} never by omission, and never with criteria. */
    private static void checkTarget(String command, boolean all, DeadLetterFilter filter) {
        if (all && !filter.isAll()) {
            throw new IllegalArgumentException("all: given with the filter " + filter
                    + " (expected: either 'all', or a retry.id or filter)");
        }
        if (!command.equals("dead") && !all && filter.isAll()) {
            throw new IllegalArgumentException("target: none (expected: a retry.id, 'all', or a filter such as"
                    + " service=... or older=7d: failback " + command + " <retry.id|all|filter>)");
        }
    }

    private static int number(Map<String, String> options, String name, int min, int max, int defaultValue) {
        String raw = options.remove(name);
        if (raw == null) {
            return defaultValue;
        }
        try {
            int n = Integer.parseInt(raw.trim());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(name + ": '" + raw + "' (expected: a whole number, " + min + " to " + max
                + ")");
    }

    /** {@code page=} and {@code size=} belong to {@code dead}, {@code rate=} to {@code replay}. */
    private static void checkOptions(String command, Map<String, String> options) {
        for (String name : options.keySet()) {
            boolean fits = name.equals("rate") ? command.equals("replay") : command.equals("dead");
            if (!fits) {
                throw new IllegalArgumentException(name + ": '" + options.get(name) + "' given to '" + command
                        + "' (expected: page= and size= for dead, rate= for replay, app= for any)");
            }
        }
    }

    private static double rate(Map<String, String> options) {
        String raw = options.remove("rate");
        if (raw == null) {
            return 0;
        }
        try {
            double r = Double.parseDouble(raw.trim());
            if (r > 0 && r <= DeadLetters.MAX_PER_SECOND) {
                return r;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("rate: '" + raw + "' (expected: replays per second, > 0 and <= "
                + (long) DeadLetters.MAX_PER_SECOND + ")");
    }
}
