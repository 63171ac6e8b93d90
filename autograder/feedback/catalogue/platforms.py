"""The words of the platforms' bundles and exports (Gradescope, PrairieLearn)."""

TEMPLATES: dict[str, str] = {
    # a bundle's grader, in the platform's container (bundle/grader.py, bundle/container.py)
    "platforms: grader not finished": "it stopped before it could write a result (killed, or out of memory or disk)",
    "platforms: grader not private": "it could not make its own files private",
    "platforms: grader configuration unreadable": "its configuration {name} is unreadable",
    "platforms: worker did not start": "the grader's worker could not start: {error}",
    # what export needs of the checkout (bundle/source.py)
    "platforms: export needs a checkout": (
        "export needs a source checkout of the course (found no {missing} beside {package}); run it from the "
        "repository, where `pip install -e .` was run."),
    "platforms: export needs references": (
        "export needs the course's references/ folder (found none beside {package}, and {env} names none); run "
        "it from a source checkout of the course."),
    "platforms: export reference missing": "{path} is missing: the bundle cannot grade {exercise} without it",
    # `autograder export` (platforms/export.py)
    "platforms: salt not set": "{env} is not set: {risk}",
    "platforms: public salt risk": "the bundle would draw its hidden inputs with the course's public default salt, "
                                   "so anyone with the course's repository could compute them, and the references "
                                   "there give the answers on them. Set {env} to a secret of your own for the term "
                                   "(e.g. `export AUTOGRADER_SALT=$(python3 -c 'import secrets; "
                                   "print(secrets.token_hex(16))')`), or pass --public-salt to make a bundle for "
                                   "trying the platform out.",
    "platforms: public salt warning": "warning: this bundle uses the public default salt (--public-salt): {risk}",
    "platforms: memory": "memory: the grader and its worker take about {grader_mb} MB and a submission up to "
                         "{memory_mb} MB more (--memory-mb), {need} MB in all; {platform}'s limit is {limit} MB: "
                         "{verdict}",
    "platforms: memory enough": "enough",
    "platforms: memory not enough": "NOT enough",
    "platforms: memory fixed fits": "{line}, for --memory-mb up to {most} (a course cannot raise it).",
    "platforms: memory fixed too small": "{line}, and a course cannot raise it: export again with --memory-mb {most} "
                                         "or less.",
    "platforms: memory fits": "{line}. If you raise --memory-mb past {most}, raise {where} to {grader_mb} MB plus "
                              "--memory-mb.",
    "platforms: memory too small": "{line}: raise {where} to at least {need} MB, or grading is killed.",
    # Gradescope (platforms/gradescope.py): what a student reads there
    "platforms: gradescope shown after due date": "after the due date",
    "platforms: gradescope shown after published": "when grades are published",
    "platforms: gradescope shown to staff": "to course staff only",
    "platforms: gradescope grader fault": "The grader failed on this exercise. This is the grader's fault, not yours: "
                                          "course staff have been told (the details are in the autograder's log, "
                                          "which only they see) and will regrade it. Your other exercises were "
                                          "graded as usual.",
    "platforms: gradescope broken bundle": "The autograder could not start ({why}). This is the grader's fault, not "
                                           "yours: course staff have been told (the details are in the "
                                           "autograder's log) and will regrade your submission.",
    "platforms: gradescope public points": "{exercise}: public checks {score:g}/{max_score:g} points; {hidden} more "
                                           "check(s) on hidden inputs, shown {when}.",
    # Gradescope's export, for the teacher
    "platforms: gradescope memory setting": "the assignment's memory limit (Settings > Autograder Settings)",
    "platforms: gradescope wrote": "wrote {path}: upload it as the assignment's autograder, built on {image} "
                                   "(book/reference/platforms.md).",
    "platforms: gradescope sandbox": "sandbox: setup.sh installs bubblewrap; where it cannot run in the container, "
                                     "submissions run as the unprivileged user {user}, which setup.sh creates.",
    # PrairieLearn (platforms/prairielearn.py): what a student reads there
    "platforms: prairielearn topic": "In-place autograd errors",
    "platforms: prairielearn question": (
        '<pl-question-panel>\n'
        '  <p><strong>Exercise {number}: {title}</strong></p>\n'
        '  <p>Download <a href="{{{{options.client_files_question_url}}}}/{notebook}">{notebook}</a>, open it in\n'
        '  Jupyter, run the failure cell to see the error, write your fix in the answer cell and check it with\n'
        '  <code>check("{id}")</code>. Then upload the notebook here (keep its name).</p>\n'
        '  <p>The grader runs more checks than the self-check, on inputs you do not see; hidden checks tell you\n'
        '  that they failed and why in general terms.</p>\n'
        '</pl-question-panel>\n'
        '\n'
        '<pl-file-upload file-names="{notebook}"></pl-file-upload>\n'
        '\n'
        '<pl-submission-panel>\n'
        '  <pl-external-grader-results></pl-external-grader-results>\n'
        '  <pl-file-preview></pl-file-preview>\n'
        '</pl-submission-panel>\n'),
    "platforms: prairielearn not answered": "You have not answered yet: {why} This submission did not use up an "
                                            "attempt.",
    "platforms: prairielearn untouched": "the answer cells still hold the notebook's TODO. Write your fix there, "
                                         "check it with check(\"{id}\"), then submit the notebook again.",
    "platforms: prairielearn grader fault": "The grader failed on this submission. This is the grader's fault, not "
                                            "yours: course staff have been told (the details are in the grading "
                                            "job's log, which only they see). It did not use up an attempt; submit "
                                            "again later.",
    # PrairieLearn's export, for the teacher
    "platforms: prairielearn bad image": "--image must be a Docker image name, got {image!r}",
    "platforms: prairielearn no notebook": "{notebook} is missing: run `autograder assign` first",
    "platforms: prairielearn wrong exercise": "exercise {exercise!r} is not one this export grades ({exercises}): "
                                              "the question's entrypoint names the wrong exercise",
    "platforms: prairielearn wrote": "wrote {count} question(s) under {questions}, the grader under {server} and its "
                                     "image's Dockerfile under {graders}.",
    "platforms: prairielearn image": "image: build it for PrairieLearn's x86-64 graders and push it: {build} && "
                                     "docker push {image}",
    "platforms: prairielearn sandbox": "sandbox: the image has bubblewrap; where it cannot run, submissions run as "
                                       "the unprivileged user {user}, which the image creates.",
}
